import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionArchive } from "../archive/index.js";
import { fileTaskStore } from "../task/index.js";
import { DEFAULT_CONFIG, RECOVERY_LIMITS } from "../types.js";
import { CLI_HINTS, type RecoveryContext, runRecovery } from "./index.js";

let root: string;
let context: RecoveryContext;

beforeEach(async () => {
	root = await mkdtemp(join(tmpdir(), "pc-recovery-"));
	const archive = await openSessionArchive({ root, sessionId: "s" });
	context = { sessionId: "s", archive, tasks: fileTaskStore(archive.dir), config: DEFAULT_CONFIG };
});
afterEach(async () => {
	await rm(root, { recursive: true, force: true });
});

async function archiveText(text: string | Buffer, tool = "run"): Promise<string> {
	const writer = await context.archive.create();
	await writer.write(Buffer.isBuffer(text) ? text : Buffer.from(text));
	await writer.finish({
		tool,
		source: "visible-tool-result",
		decision: "structured-capsule",
		isError: false,
		exitCode: 0,
		command: null,
	});
	return writer.id;
}

const numbered = (count: number, make = (i: number) => `line ${i}`) =>
	Array.from({ length: count }, (_, i) => make(i + 1)).join("\n");

const bytes = (text: string) => Buffer.byteLength(text);

describe("list", () => {
	it("shows ids newest first with tool, size and status, never bodies", async () => {
		await archiveText("secret body one\n", "ipython");
		await archiveText("secret body two\n", "run");
		const { text, evidence } = await runRecovery(context, { action: "list" });
		expect(evidence).toBe(true);
		const lines = text.split("\n");
		expect(lines[1]).toMatch(/^obs_000002 {2}tool=run {2}source=visible-tool-result {2}16 bytes {2}1 lines/);
		expect(lines[2]).toMatch(/^obs_000001 {2}tool=ipython/);
		expect(text).not.toContain("secret body");
	});

	it("lists at most 20 and respects a smaller limit", async () => {
		for (let i = 0; i < 23; i++) await archiveText(`o${i}\n`);
		const all = await runRecovery(context, { action: "list" });
		expect(all.text.match(/^obs_/gm)).toHaveLength(20);
		expect(all.text).toContain("obs_000023");
		expect(all.text).not.toMatch(/^obs_000003/m);
		const few = await runRecovery(context, { action: "list", limit: "3" });
		expect(few.text.match(/^obs_/gm)).toHaveLength(3);
		expect(few.text).toContain("prime_context action=list limit=20");
		const tooMany = await runRecovery(context, { action: "list", limit: 21 });
		expect(tooMany.isError).toBe(true);
		expect(tooMany.text).toMatch(/limit must be an integer from 1 to 20/);
	});

	it("says so when the session has no observations", async () => {
		const response = await runRecovery(context, { action: "list" });
		expect(response).toMatchObject({ evidence: false, isError: false });
		expect(response.text).toMatch(/No archived observations/);
	});
});

describe("read", () => {
	it("returns numbered exact lines and the next page", async () => {
		const id = await archiveText(numbered(500));
		const { text, evidence, truncated } = await runRecovery(context, {
			action: "read",
			id,
			startLine: 200,
			endLine: 202,
		});
		expect(evidence).toBe(true);
		expect(truncated).toBe(false);
		expect(text).toContain(`${id} (tool=run,`);
		expect(text).toContain("200: line 200\n201: line 201\n202: line 202");
		expect(text).toContain(`prime_context action=read id=${id} startLine=203 endLine=205`);
	});

	it("returns at most 80 lines per read and says how to page on", async () => {
		const id = await archiveText(numbered(500));
		const { text, truncated } = await runRecovery(context, { action: "read", id, startLine: 1, endLine: 400 });
		expect(truncated).toBe(true);
		expect(text.match(/^\d+: /gm)).toHaveLength(80);
		expect(text).toContain("At most 80 lines per read");
		expect(text).toContain(`startLine=81 endLine=160`);
	});

	it("keeps every response within 12 KiB, cutting on whole lines", async () => {
		const id = await archiveText(numbered(80, (i) => `${i} ${"w".repeat(400)}`));
		const { text, truncated } = await runRecovery(context, { action: "read", id });
		expect(bytes(text)).toBeLessThanOrEqual(RECOVERY_LIMITS.responseMaxBytes);
		expect(truncated).toBe(true);
		const shown = text.match(/^(\d+): /gm) ?? [];
		const last = Number.parseInt(shown[shown.length - 1], 10);
		expect(text).toContain(`Cut to fit 12288 bytes; showed lines 1-${last} of 80`);
		expect(text).toContain(`startLine=${last + 1}`);
	});

	it("shows a single 10 MB line cut with its size instead of flooding the response", async () => {
		const id = await archiveText(`start\n${"z".repeat(10 * 1024 * 1024)}\nend\n`);
		const { text } = await runRecovery(context, { action: "read", id, startLine: 2, endLine: 3 });
		expect(bytes(text)).toBeLessThanOrEqual(RECOVERY_LIMITS.responseMaxBytes);
		expect(text).toMatch(/2: z+… \[line cut: 10485760 bytes\]/);
	});

	it("shows binary content with control bytes escaped and says it is binary", async () => {
		const id = await archiveText(Buffer.from([0x41, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0x0a, 0xff, 0x42, 0x0a]));
		const { text } = await runRecovery(context, { action: "read", id });
		expect(text).toContain("binary: not valid UTF-8");
		expect(text).toContain("1: A\\x00\\x1b[2J\n2: \uFFFDB");
		expect(text).not.toContain("\u001b");
	});

	it("pages through many giant lines within 12 KiB, each cut with its size", async () => {
		const giant = "G".repeat(2 * 1024 * 1024);
		const id = await archiveText(`${giant}\n`.repeat(8));
		const { text } = await runRecovery(context, { action: "read", id, startLine: 1, endLine: 8 });
		expect(bytes(text)).toBeLessThanOrEqual(RECOVERY_LIMITS.responseMaxBytes);
		expect(text.match(/\[line cut: 2097152 bytes\]/g)?.length).toBeGreaterThanOrEqual(2);
		expect(text).toMatch(/Next: prime_context action=read id=obs_000001 startLine=\d+ endLine=\d+/);
	});

	it("explains a range past the end", async () => {
		const id = await archiveText(numbered(10));
		const { text, evidence, isError } = await runRecovery(context, { action: "read", id, startLine: 50 });
		expect(evidence).toBe(false);
		// Lines that do not exist are an error (a script sees the CLI exit 1), with the read that works.
		expect(isError).toBe(true);
		expect(text).toBe(
			`Error: ${id} has 10 lines; startLine 50 is past the end. Try: prime_context action=read id=${id} startLine=1 endLine=10`,
		);
	});

	it("names bad and unknown ids and says how to list ids", async () => {
		await archiveText("x\n");
		const traversal = await runRecovery(context, { action: "read", id: "../../x" });
		expect(traversal.isError).toBe(true);
		expect(traversal.text).toMatch(/invalid observation id "\.\.\/\.\.\/x".*list/);
		const unknown = await runRecovery(context, { action: "read", id: "obs_000077" });
		expect(unknown.text).toMatch(/unknown observation id obs_000077.*list/);
		const missing = await runRecovery(context, { action: "read" });
		expect(missing.text).toMatch(/id is required; usage: action=read id=obs_\.\.\./);
	});

	it("uses the readMaxBytes budget and command-line hints for a person", async () => {
		const id = await archiveText(numbered(5000, (i) => `entry ${i} ${"p".repeat(40)}`));
		const { text } = await runRecovery(
			{ ...context, config: { ...DEFAULT_CONFIG, readMaxBytes: 20_000 } },
			{ action: "read", id },
			{ audience: "human", hints: CLI_HINTS },
		);
		expect(bytes(text)).toBeLessThanOrEqual(20_000);
		expect(text.match(/^\d+: /gm)?.length).toBeGreaterThan(80);
		expect(text).toMatch(new RegExp(`prime-context read ${id} \\d+:\\d+`));
	});

	it("a person's bad range names no line cap, since a person's read has none", async () => {
		const id = await archiveText(numbered(10));
		const { text, isError } = await runRecovery(
			context,
			{ action: "read", id, startLine: 5, endLine: 2 },
			{ audience: "human", hints: CLI_HINTS },
		);
		expect(isError).toBe(true);
		expect(text).toContain("endLine (2) must not be before startLine (5)");
		expect(text).not.toMatch(/at most \d+ lines/);
	});
});

describe("search", () => {
	it("finds a fixed string case-insensitively with line numbers and context", async () => {
		const id = await archiveText(numbered(100, (i) => (i === 50 ? "E   AssertionError: boom" : `ok ${i}`)));
		const { text, evidence } = await runRecovery(context, {
			action: "search",
			id,
			query: "assertionerror",
			contextLines: 1,
		});
		expect(evidence).toBe(true);
		expect(text).toContain(`1 match for "assertionerror" in ${id}`);
		expect(text).toContain(`${id} lines 49-51:\n49- ok 49\n50: E   AssertionError: boom\n51- ok 51`);
	});

	it("treats the query as fixed text, not a pattern", async () => {
		const id = await archiveText("a.b\naxb\n(x)*\n");
		expect((await runRecovery(context, { action: "search", id, query: "a.b" })).text).toMatch(/^1 match/);
		expect((await runRecovery(context, { action: "search", id, query: "(x)*" })).text).toMatch(/^1 match/);
	});

	it("lets nearby matches share one window instead of repeating lines", async () => {
		const id = await archiveText(numbered(40, (i) => ([10, 12, 13].includes(i) ? `FAIL ${i}` : `pass ${i}`)));
		const { text } = await runRecovery(context, { action: "search", id, query: "fail", contextLines: 2 });
		expect(text).toContain(`${id} lines 8-15:`);
		const numbers = (text.match(/^\d+[:-]/gm) ?? []).map((n) => Number.parseInt(n, 10));
		expect(numbers).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
	});

	it("separates windows that do not touch", async () => {
		const id = await archiveText(numbered(40, (i) => ([5, 30].includes(i) ? `FAIL ${i}` : `pass ${i}`)));
		const { text } = await runRecovery(context, { action: "search", id, query: "FAIL", contextLines: 0 });
		expect(text).toContain(`${id} lines 5-5:\n5: FAIL 5\n-- lines 30-30\n30: FAIL 30`);
	});

	it("returns at most 10 matches and pages on with matchOffset", async () => {
		const id = await archiveText(numbered(300, (i) => (i % 10 === 0 ? `TRACE ${i}` : `x ${i}`)));
		const first = await runRecovery(context, { action: "search", id, query: "trace", contextLines: 0 });
		expect(first.text.match(/^\d+: /gm)).toHaveLength(10);
		expect(first.text).toContain("Showed matches 1-10 of 30");
		expect(first.text).toContain("matchOffset=10");
		const small = await runRecovery(context, { action: "search", id, query: "trace", contextLines: 0, maxMatches: 3 });
		expect(small.text).toContain(
			`Next: prime_context action=search id=${id} query="trace" contextLines=0 matchOffset=3 maxMatches=3`,
		);
		const later = await runRecovery(context, {
			action: "search",
			id,
			query: "trace",
			contextLines: 0,
			matchOffset: 25,
			maxMatches: 5,
		});
		expect((later.text.match(/^\d+: /gm) ?? []).map((n) => Number.parseInt(n, 10))).toEqual([260, 270, 280, 290, 300]);
		expect(later.text).toContain("no more matches");
		const past = await runRecovery(context, { action: "search", id, query: "trace", matchOffset: 99 });
		expect(past.text).toContain("matchOffset 99 is past the last one");
	});

	it("bounds contextLines to 0-20 and maxMatches to 1-10", async () => {
		const id = await archiveText("x\n");
		const wide = await runRecovery(context, { action: "search", id, query: "x", contextLines: 21 });
		expect(wide.text).toMatch(/contextLines must be an integer from 0 to 20/);
		const many = await runRecovery(context, { action: "search", id, query: "x", maxMatches: 11 });
		expect(many.text).toMatch(/maxMatches must be an integer from 1 to 10/);
	});

	it("searches the newest observations when no id is given, or only `limit` of them", async () => {
		const old = await archiveText("needle in the oldest\n");
		for (let i = 0; i < 20; i++) await archiveText(i === 5 ? "a NEEDLE here\n" : "hay\n");
		const recent = await runRecovery(context, { action: "search", query: "needle" });
		expect(recent.text).toContain("in the newest 20 observations");
		expect(recent.text).toContain("obs_000007 lines 1-1:");
		expect(recent.text).not.toContain(old);
		const narrow = await runRecovery(context, { action: "search", query: "needle", limit: 3 });
		expect(narrow.text).toMatch(/No match for "needle" in the newest 3 observations/);
		expect(narrow.evidence).toBe(false);
	});

	it("keeps responses within 12 KiB when matching lines are huge", async () => {
		const id = await archiveText(numbered(10, (i) => `${"q".repeat(100_000)} HIT ${i} ${"q".repeat(100_000)}`));
		const { text } = await runRecovery(context, { action: "search", id, query: "hit", contextLines: 0 });
		expect(bytes(text)).toBeLessThanOrEqual(RECOVERY_LIMITS.responseMaxBytes);
		expect(text).toContain("HIT 1 ");
		expect(text).toContain("[line cut: 200007 bytes]");
	});
});

describe("status and update", () => {
	it("updates focus, items and pins, and shows them in status", async () => {
		const id = await archiveText("keep this\n");
		const update = await runRecovery(context, {
			action: "update",
			focus: "Finish range reads.",
			add: ["Write tests", "Ship"],
			pin: id,
		});
		expect(update.text).toContain("Task updated: set focus, added item_1, added item_2, pinned obs_000001.");
		await runRecovery(context, { action: "update", complete: ["item_1"] });
		const status = await runRecovery(context, { action: "status" });
		expect(status.text).toContain("session: s");
		expect(status.text).toContain("archive: 1 observation");
		expect(status.text).toContain(
			'FOCUS\n"Finish range reads."\n\nOPEN_ITEMS\n- [item_2] Ship\n\nPINNED_OUTPUTS\n- obs_000001',
		);
		expect(status.text).not.toContain("item_1");
	});

	it("refuses to pin an unknown observation and to complete an unknown item", async () => {
		const pin = await runRecovery(context, { action: "update", pin: ["obs_000009"] });
		expect(pin.isError).toBe(true);
		expect(pin.text).toMatch(/unknown observation id obs_000009/);
		const done = await runRecovery(context, { action: "update", complete: "item_4" });
		expect(done.text).toMatch(/no open item "item_4"; open items: none/);
		const empty = await runRecovery(context, { action: "update" });
		expect(empty.text).toMatch(/update needs at least one change; usage:/);
	});
});

describe("invalid arguments", () => {
	it("name the allowed actions and arguments", async () => {
		expect((await runRecovery(context, { action: "grep" })).text).toMatch(
			/unknown action "grep"; allowed actions: list, read, search, status, update/,
		);
		expect((await runRecovery(context, { action: "read", id: "obs_000001", lines: 5 })).text).toMatch(
			/unknown argument lines for read; usage: action=read/,
		);
		expect((await runRecovery(context, { action: "read", id: "obs_000001", startLine: 0 })).text).toMatch(
			/startLine must be an integer >= 1/,
		);
		expect((await runRecovery(context, "read")).isError).toBe(true);
	});
});
