import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openContextSession } from "./session.js";

let base: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
	base = await mkdtemp(join(tmpdir(), "pc-session-"));
	await mkdir(join(base, "repo", ".git"), { recursive: true });
	env = { PRIME_AGENT_DIR: join(base, "agent"), PRIME_CONTEXT_HOME: join(base, "home") };
});
afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

const open = (sessionId = "s") => openContextSession({ sessionId, cwd: join(base, "repo"), env });
const bigLog = () =>
	`${Array.from({ length: 3000 }, (_, i) => `step ${i} ok`).join("\n")}\nE   ValueError: bad input\n`;

describe("context session", () => {
	it("stores under PRIME_CONTEXT_HOME and derives the session from the working directory", async () => {
		const session = await openContextSession({ cwd: join(base, "repo"), env });
		expect(session.root).toBe(join(base, "home"));
		expect(session.sessionId).toMatch(/^repo-[0-9a-f]{12}$/);
		expect(session.archive.dir).toBe(join(base, "home", "sessions", session.sessionId));
	});

	it("keeps the storage directories user-only", async () => {
		const session = await open();
		await session.observe({ tool: "run", text: bigLog(), isError: false });
		for (const dir of [session.root, join(session.root, "sessions"), session.archive.dir]) {
			expect((await stat(dir)).mode & 0o777, dir).toBe(0o700);
		}
	});

	it("observes through the broker and recovers the archived text", async () => {
		const session = await open();
		const result = await session.observe({ tool: "ipython", text: bigLog(), isError: true });
		expect(result).toMatchObject({ id: "obs_000001", decision: "structured-capsule", archived: true });
		const read = await session.recover({ action: "read", id: result.id, startLine: 3001, endLine: 3001 });
		expect(read.text).toContain("3001: E   ValueError: bad input");
	});

	it("reports every recovery call to the broker, with whether it found evidence", async () => {
		const session = await open();
		const { id } = await session.observe({ tool: "ipython", text: bigLog(), isError: false });
		await session.recover({ action: "search", id, query: "ValueError" });
		await session.recover({ action: "search", id, query: "not there" });
		await session.recover({ action: "read", id: "obs_000404" });
		const metrics = await session.broker.metrics();
		expect(metrics.recovery.calls.search).toBe(2);
		expect(metrics.recovery.calls.read).toBe(1);
		expect(metrics.recovery.withEvidence).toBe(1);
		expect(metrics.recovery.empty).toBe(2);
	});

	it("does not archive recovery responses again", async () => {
		const session = await open();
		const { id } = await session.observe({ tool: "ipython", text: bigLog(), isError: false });
		await session.recover({ action: "read", id, startLine: 1, endLine: 80 });
		await session.recover({ action: "list" });
		expect((await session.archive.list()).map((r) => r.id)).toEqual([id]);
	});

	it("keeps the task snapshot across sessions opened on the same id", async () => {
		const first = await open();
		const { id } = await first.observe({ tool: "run", text: bigLog(), isError: false });
		await first.recover({ action: "update", focus: "Fix the parser", add: ["Add a test"], pin: [id] });
		const again = await open();
		expect(await again.renderTask({ rootRequest: "Make the parser strict." })).toBe(
			[
				"<prime_context_task>",
				"ROOT_REQUEST",
				'"Make the parser strict."',
				"",
				"FOCUS",
				'"Fix the parser"',
				"",
				"OPEN_ITEMS",
				"- [item_1] Add a test",
				"",
				"PINNED_OUTPUTS",
				`- ${id}`,
				"</prime_context_task>",
			].join("\n"),
		);
	});

	it("cleans up its own archive, clears pins, keeps focus and items, and leaves other sessions alone", async () => {
		const other = await open("other");
		await other.observe({ tool: "run", text: "kept\n", isError: false });
		const session = await open();
		const { id } = await session.observe({ tool: "run", text: bigLog(), isError: false });
		await session.recover({ action: "update", focus: "Keep going", pin: [id] });
		const removed = await session.cleanup();
		expect(removed.observations).toBe(1);
		expect(removed.bytes).toBeGreaterThan(0);
		expect(await session.archive.list()).toEqual([]);
		expect(await session.tasks.load()).toMatchObject({ focus: "Keep going", pins: [] });
		expect(await other.archive.list()).toHaveLength(1);
	});

	it("uses project config over global config, and the doctor reports bad values", async () => {
		await mkdir(join(base, "agent"), { recursive: true });
		await writeFile(
			join(base, "agent", "prime-context.json"),
			JSON.stringify({ minTextBytes: 100, readMaxBytes: "big" }),
		);
		await mkdir(join(base, "repo", ".prime", "agent"), { recursive: true });
		await writeFile(join(base, "repo", ".prime", "agent", "prime-context.json"), JSON.stringify({ minTextBytes: 200 }));
		const session = await open();
		expect(session.config.minTextBytes).toBe(200);
		expect(session.config.readMaxBytes).toBe(65_536);
		const report = await session.doctor();
		expect(report.ok).toBe(false);
		expect(report.lines.join("\n")).toContain('readMaxBytes = "big": must be an integer of at least 1024');
	});

	it("the doctor says when the storage root cannot be written, and observing still returns the original", async () => {
		await writeFile(join(base, "blocker"), "");
		const session = await openContextSession({
			sessionId: "s",
			cwd: join(base, "repo"),
			env: { ...env, PRIME_CONTEXT_HOME: join(base, "blocker", "home") },
		});
		const report = await session.doctor();
		expect(report.ok).toBe(false);
		expect(report.lines.join("\n")).toMatch(/storage root: .*blocker.* is not writable .*set PRIME_CONTEXT_HOME/);
		const text = bigLog();
		const result = await session.observe({ tool: "run", text, isError: false });
		expect(result.archived).toBe(false);
		expect(result.text).toBe(text);
	});
});

/** A vitest run (ANSI colours between words) with `failures` failing tests among 2,000 passing lines. */
function colouredVitest(names: string[]): string {
	const out: string[] = [];
	for (let i = 0; i < 2000; i++)
		out.push(` \u001b[32m✓\u001b[39m src/grid.test.ts \u001b[2m>\u001b[22m cell ${i} \u001b[33m${i % 9}ms\u001b[39m`);
	for (const name of names) out.push(` \u001b[31m×\u001b[39m \u001b[1msrc/esc.test.ts\u001b[22m > ${name}`);
	out.push(` \u001b[2mTest Files\u001b[22m  \u001b[1m\u001b[31m1 failed\u001b[39m\u001b[22m (1)`);
	out.push(
		`      \u001b[2mTests\u001b[22m  \u001b[1m\u001b[31m${names.length} failed\u001b[39m\u001b[22m | \u001b[32m2000 passed\u001b[39m (${2000 + names.length})`,
	);
	return `${out.join("\n")}\n`;
}

describe("the capsule shows facts verbatim, and search finds what it shows", () => {
	const names = ["keeps x<y && z", "quotes \u001b[1m&amp;\u001b[22m literally", "ends with a space "];

	it("lists ids exactly as the tool printed them, with & and < and a trailing space", async () => {
		const session = await open();
		const result = await session.observe({ tool: "bash", text: colouredVitest(names), isError: false });
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain("\nsrc/esc.test.ts > keeps x<y && z\n");
		expect(result.text).toContain("\nsrc/esc.test.ts > quotes &amp; literally\n");
		expect(result.text).toContain("\nsrc/esc.test.ts > ends with a space \n");
		expect(result.text).not.toContain("&lt;");
	});

	it("finds an id copied from the capsule although colour codes sit between its words, at its original line", async () => {
		const session = await open();
		const result = await session.observe({ tool: "bash", text: colouredVitest(names), isError: false });
		const found = await session.recover({
			action: "search",
			id: result.id,
			query: "src/esc.test.ts > quotes &amp; literally",
		});
		expect(found.text).toContain("1 match for");
		expect(found.text).toContain("\n2002:  × src/esc.test.ts > quotes &amp; literally\n");
	});

	it("escapes only a literal closing tag of the envelope", async () => {
		const session = await open();
		const text = colouredVitest(["prints </prime_context_output> inside"]);
		const result = await session.observe({ tool: "bash", text, isError: false });
		expect(result.text).toContain("\nsrc/esc.test.ts > prints &lt;/prime_context_output> inside\n");
		expect(result.text.match(/<\/prime_context_output>/g)).toHaveLength(1);
	});

	it("shows a progress bar's final frame, not its first", async () => {
		const session = await open();
		const bar = Array.from({ length: 200 }, (_, i) => `fetching [${"=".repeat(i % 30)}] ${i}/199`).join("\r");
		const lines = Array.from({ length: 3000 }, (_, i) => `row ${i}: value ${i * 7}`);
		lines[5] = bar;
		lines.push("ValueError: row 2999 has no owner");
		const result = await session.observe({ tool: "bash", text: `${lines.join("\n")}\n`, isError: false, exitCode: 1 });
		expect(result.text).toContain(`6: fetching [${"=".repeat(199 % 30)}] 199/199`);
		expect(result.text).not.toContain("fetching [] 0/199");
	});
});

describe("text with a few odd bytes is still text", () => {
	it("shows a vitest log with NUL bytes inside test names as text, escaping them, with hints and ids", async () => {
		const session = await open();
		const names = ["parses a\u0000b", "keeps \u0000 apart", "joins\u0000"];
		const result = await session.observe({ tool: "bash", text: colouredVitest(names), isError: false });
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).not.toContain("Binary output");
		expect(result.text).toContain("\nsrc/esc.test.ts > parses a\\x00b\n");
		expect(result.text).toMatch(/prime_context action=read/);
		const found = await session.recover({ action: "search", id: result.id, query: "keeps \\x00 apart" });
		expect(found.text).toContain("1 match for");
	});

	it("shows a pytest log with one Latin-1 byte as text", async () => {
		const session = await open();
		const lines = Array.from({ length: 2000 }, (_, i) => `tests/test_io.py::test_case_${i} PASSED`);
		lines.push(
			"FAILED tests/test_io.py::test_caf\u00e9 - UnicodeDecodeError: bad byte",
			"1 failed, 2000 passed in 3.10s",
		);
		const bytes = Buffer.from(`${lines.join("\n")}\n`, "latin1");
		const path = join(base, "pytest.log");
		await writeFile(path, bytes);
		const result = await session.observe({ tool: "bash", text: "", fullOutputPath: path, isError: false });
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).not.toContain("Binary output");
		expect(result.text).toContain("tests/test_io.py::test_caf\uFFFD");
		expect(result.text).toContain("TEST_RESULT FAIL 1 failed, 2000 passed");
		expect((await session.archive.readBytes(result.id)).equals(bytes)).toBe(true);
	});

	it("still calls output that is mostly not text binary", async () => {
		const session = await open();
		const bytes = Buffer.alloc(40_000);
		for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
		const path = join(base, "blob.bin");
		await writeFile(path, bytes);
		const result = await session.observe({ tool: "bash", text: "", fullOutputPath: path, isError: false });
		expect(result.text).toContain("Binary output archived locally");
	});
});
