import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { input, pytestRun, pythonSource, session, tempDir } from "../../test/broker-session.js";
import { openSessionArchive } from "../archive/index.js";
import { DEFAULT_CONFIG, type ObservationInput } from "../types.js";
import { createBroker } from "./index.js";

const hints = /prime_context action=(read|search)/;

describe("pass-through and archiving", () => {
	it("passes short novel output through unchanged, still archived with an id", async () => {
		const { broker, archive } = await session();
		const result = await broker.observe(input("hello\nworld\n"));
		expect(result).toMatchObject({
			decision: "pass-through",
			text: "hello\nworld\n",
			archived: true,
			bytes: 12,
			lines: 2,
		});
		expect(result.id).toMatch(/^obs_\d{6,}$/);
		expect((await archive.readBytes(result.id)).toString()).toBe("hello\nworld\n");
	});

	it("passes empty output through as it is, and archives it", async () => {
		const { broker, archive } = await session();
		const result = await broker.observe(input(""));
		expect(result).toMatchObject({ decision: "pass-through", text: "", bytes: 0, lines: 0, archived: true });
		expect((await archive.get(result.id)).bytes).toBe(0);
	});

	it("archives the complete output file when there is one, and falls back to the visible text otherwise", async () => {
		const { broker, archive } = await session();
		const dir = await tempDir("full-output-");
		const full = join(dir, "out.txt");
		const body = pythonSource(40_000);
		await writeFile(full, body);
		const withFile = await broker.observe(input("(capped visible text)", { fullOutputPath: full }));
		expect(withFile.source).toBe("public-complete-output");
		expect(withFile.bytes).toBe(Buffer.byteLength(body));
		expect(withFile.text).toContain('source="public-complete-output"');
		expect((await archive.readBytes(withFile.id)).toString()).toBe(body);

		const missing = await broker.observe(input("visible only", { fullOutputPath: join(dir, "absent.txt") }));
		expect(missing.source).toBe("visible-tool-result");
		expect((await archive.readBytes(missing.id)).toString()).toBe("visible only");
	});

	it("returns the original text with archived=false and the reason when the archive cannot be written", async () => {
		const base = await tempDir("broker-unwritable-");
		// The storage root is a regular file, so nothing can be created below it.
		const root = join(base, "not-a-directory");
		await writeFile(root, "");
		const archive = await openSessionArchive({ root, sessionId: "s" });
		const broker = await createBroker({ archive, config: DEFAULT_CONFIG });
		const text = pythonSource(50_000);
		const result = await broker.observe(input(text));
		expect(result.decision).toBe("pass-through");
		expect(result.text).toBe(text);
		expect(result.archived).toBe(false);
		expect(result.archiveError).toMatch(/not archived .*writable/);
	});
});

describe("structured capsules", () => {
	it("turns large output into a bounded capsule with true recovery hints", async () => {
		const { broker, archive } = await session();
		const lines = Array.from({ length: 3000 }, (_, i) => `processing record ${i}: value=${(i * 7919) % 1000}`);
		lines[1500] = "Traceback (most recent call last):";
		lines[1501] = '  File "/srv/app/jobs.py", line 88, in run';
		lines[1502] = "ValueError: record 1500 has no owner";
		const text = `${lines.join("\n")}\n`;
		const result = await broker.observe(input(text, { exitCode: 1 }));
		expect(result.decision).toBe("structured-capsule");
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(DEFAULT_CONFIG.capsuleMaxBytes);
		expect(result.text).toContain(
			`<prime_context_output id="${result.id}" tool="ipython" bytes="${text.length}" lines="3000" source="visible-tool-result">`,
		);
		expect(result.text).toContain("Large output archived locally. The excerpt below is incomplete.");
		expect(result.text).toContain("1503: ValueError: record 1500 has no owner");
		expect(result.text).toContain("COMMAND_RESULT FAIL exit 1");
		// Read window: 20 lines before to 10 after the leading exception line.
		expect(result.text).toContain(
			`Read exact visible text: prime_context action=read id=${result.id} startLine=1483 endLine=1513`,
		);
		const query = /query="([^"]+)"/.exec(result.text)?.[1] ?? "";
		expect(query.length).toBeGreaterThan(0);
		expect((await archive.readBytes(result.id)).toString()).toContain(query);
	});

	it("passes everything through, still archived, when the broker is disabled", async () => {
		const { broker, archive } = await session({ ...DEFAULT_CONFIG, enabled: false });
		const text = pythonSource(40_000);
		const result = await broker.observe(input(text));
		expect(result).toMatchObject({ decision: "pass-through", text, archived: true });
		expect((await archive.readBytes(result.id)).toString()).toBe(text);
	});

	it("keeps a tool error an error", async () => {
		const { broker } = await session();
		const result = await broker.observe(input(pythonSource(40_000), { isError: true }));
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain("TOOL_ERROR");
		expect(result.text).not.toMatch(/\bPASS\b/);
	});

	it("shrinks capsules as context usage rises", async () => {
		const alpha = (n: number) => n.toString(26).replace(/\d/g, (d) => "qrstuvwxyz"[Number(d)]);
		const lines = Array.from(
			{ length: 400 },
			(_, i) => `error: module ${alpha(i)} is missing symbol ${alpha(i * 7 + 3)}`,
		);
		const text = `${lines.join("\n")}\n${pythonSource(30_000)}`;
		const low = await (await session()).broker.observe(input(text, { contextUsage: 0.1 }));
		const high = await (await session()).broker.observe(input(text, { contextUsage: 0.95 }));
		expect(Buffer.byteLength(high.text)).toBeLessThanOrEqual(DEFAULT_CONFIG.capsuleMaxBytes / 2);
		expect(Buffer.byteLength(high.text)).toBeLessThan(Buffer.byteLength(low.text));
	});

	it("lowers the archive threshold as context usage rises, never below 8 KiB", async () => {
		const text = pythonSource(16_000);
		const calm = await (await session()).broker.observe(input(text, { contextUsage: 0.2 }));
		const busy = await (await session()).broker.observe(input(text, { contextUsage: 0.95 }));
		expect(calm.decision).toBe("pass-through");
		expect(busy.decision).toBe("structured-capsule");
		const small = await (await session()).broker.observe(input(pythonSource(7_000), { contextUsage: 0.99 }));
		expect(small.decision).toBe("pass-through");
	});

	it("says binary output is binary, shows no excerpt of it, and archives it byte-exact", async () => {
		const { broker, archive } = await session();
		const dir = await tempDir("binary-");
		const bytes = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 151 + 7) % 256));
		await writeFile(join(dir, "blob.bin"), bytes);
		const result = await broker.observe(input("binary", { fullOutputPath: join(dir, "blob.bin") }));
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain("Binary output archived locally");
		expect(result.text).not.toMatch(/^\d+: /m);
		expect((await archive.readBytes(result.id)).equals(bytes)).toBe(true);
	});

	it("keeps only a bounded prefix of a single 10 MB line and says how much was left out", async () => {
		const { broker, archive } = await session();
		const dir = await tempDir("long-line-");
		const path = join(dir, "line.txt");
		await writeFile(path, `${"x".repeat(10 * 1024 * 1024)}\nError: done\n`);
		const result = await broker.observe(input("", { fullOutputPath: path }));
		expect(result.lines).toBe(2);
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(DEFAULT_CONFIG.capsuleMaxBytes);
		expect(result.text).toMatch(/1: x+ \.\.\.\[\+\d+ bytes\]/);
		expect((await archive.get(result.id)).bytes).toBe(10 * 1024 * 1024 + 13);
	});

	it("archives a verbose usage listing at once, keeping the leading usage evidence", async () => {
		const { broker } = await session();
		const options = Array.from(
			{ length: 60 },
			(_, i) => `  --option-${i} <value>      Configure aspect ${i} of the build (default: ${i})`,
		);
		const text = `error: unrecognized argument '--colour'\nusage: build [options] <target>\n\nOptions:\n${options.join("\n")}\n`;
		expect(text.length).toBeGreaterThanOrEqual(4096);
		expect(text.length).toBeLessThan(8192);
		const result = await broker.observe(input(text, { exitCode: 2 }));
		expect(result.decision).toBe("structured-capsule");
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(1536);
		expect(result.text).toContain("1: error: unrecognized argument '--colour'");
		expect(result.text).toContain("2: usage: build [options] <target>");
		expect(result.text).toContain(`action=read id=${result.id} startLine=1 endLine=11`);
		expect(result.text).toContain('query="error: unrecognized argument"');
	});

	it("samples a trace-only burst without recovery hints and suggests a filtered rerun", async () => {
		const { broker } = await session();
		const text = `${Array.from({ length: 80 }, (_, i) => `DEBUG worker.poll: queue depth ${i % 9}, lag ${i * 3}ms`).join("\n")}\n`;
		expect(text.length).toBeGreaterThanOrEqual(2048);
		const result = await broker.observe(input(text, { command: "python worker.py" }));
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).not.toMatch(hints);
		expect(result.text).toContain("rerun the original command (python worker.py) with its output filtered");
		expect(result.text).toContain("TRACE_BURST: 80 of 80 non-blank lines are trace, debug or progress output");
	});

	it("passes a small failure through when its capsule would cost more than 30% of it", async () => {
		const config = { ...DEFAULT_CONFIG, minTextBytes: 4096 };
		const { broker } = await session(config);
		const lines = ["=================================== FAILURES ===================================", ""];
		for (let i = 0; i < 16; i++) {
			lines.push(`___________________________ test_parse_case_${i} ____________________________`);
			lines.push(
				`    def test_parse_case_${i}():`,
				`>       assert parse("${i}") == ${i + 1}`,
				`E       AssertionError: assert ${i} == ${i + 1}`,
				"",
			);
			lines.push(`tests/test_parse.py:${10 + i * 4}: AssertionError`);
		}
		lines.push("=========================== short test summary info ============================");
		for (let i = 0; i < 16; i++)
			lines.push(`FAILED tests/test_parse.py::test_parse_case_${i} - AssertionError: assert ${i} == ${i + 1}`);
		lines.push("============================== 16 failed in 0.21s ==============================");
		const text = `${lines.join("\n")}\n`;
		expect(text.length).toBeGreaterThan(4096);
		expect(text.length).toBeLessThan(8192);
		const result = await broker.observe(input(text, { tool: "bash", exitCode: 1 }));
		expect(result.decision).toBe("pass-through");
		expect(result.text).toBe(text);
	});
});

describe("no false green", () => {
	it("never reads a coverage gate's FAIL before a clean summary as a pass when no exit status is known", async () => {
		const { broker } = await session();
		const text = pytestRun(300, "62.31").replace(
			/\n(=+ 300 passed)/,
			"\nFAIL Required test coverage of 90% not reached. Total coverage: 85.00%\n$1",
		);
		expect(Buffer.byteLength(text)).toBeGreaterThan(24_576);
		const result = await broker.observe(input(text, { tool: "capsule" }));
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).not.toMatch(/\bPASS\b/);
		expect(result.text).toContain("TEST_RESULT FAIL 300 passed");
		expect(result.text).toMatch(/\n\d+: FAIL Required test coverage of 90% not reached\. Total coverage: 85\.00%\n/);
		expect(result.text).toMatch(hints);
	});

	it("shows a failure line of a log printed by a command that exited 0, with recovery hints", async () => {
		const { broker } = await session();
		const lines = Array.from(
			{ length: 1500 },
			(_, i) => `2024-05-01 12:00:${String(i % 60).padStart(2, "0")} INFO imported record ${i}`,
		);
		lines[237] = "FAIL: record 237 could not be imported";
		const result = await broker.observe(
			input(`${lines.join("\n")}\n`, { tool: "run", command: "cat import.log", exitCode: 0 }),
		);
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain("\n238: FAIL: record 237 could not be imported\n");
		expect(result.text).toMatch(hints);
		expect(result.text).toContain('query="FAIL: record 237 could not be"');
	});
});

describe("medium results", () => {
	it("passes two distinct medium results through, then uses capsules of at most 1.5 KiB, across processes", async () => {
		const s = await session();
		const first = await s.broker.observe(input(pythonSource(12_000, "a")));
		const second = await s.broker.observe(input(pythonSource(12_000, "b")));
		expect([first.decision, second.decision]).toEqual(["pass-through", "pass-through"]);
		// A second process on the same session shares the grace count.
		const other = await s.reopen();
		const third = await other.broker.observe(input(pythonSource(12_000, "c")));
		expect(third.decision).toBe("structured-capsule");
		expect(Buffer.byteLength(third.text)).toBeLessThanOrEqual(1536);
		expect(third.text).toMatch(hints);
	});
});

describe("excerpt selection", () => {
	it("never folds failure lines by shape: the first of each shape leads, the others follow as room allows", async () => {
		const { broker } = await session();
		const lines = Array.from(
			{ length: 600 },
			(_, i) =>
				`ERROR: connection to 10.0.${i % 250}.${i % 7} refused (attempt ${i}) at /srv/net/pool${i}.py:${40 + i}`,
		);
		const text = `${lines.join("\n")}\nFATAL: giving up after 600 attempts\n`;
		const result = await broker.observe(input(text, { exitCode: 1 }));
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain("\n1: ERROR: connection to 10.0.0.0 refused (attempt 0) at /srv/net/pool0.py:40\n");
		expect(result.text).toContain("\n2: ERROR: connection to 10.0.1.1 refused (attempt 1) at /srv/net/pool1.py:41\n");
		expect(result.text).not.toContain("lines of this shape");
		expect(result.text).toContain("601: FATAL: giving up after 600 attempts");
	});

	it("lists every failing test of node's dot reporter, whose failure lines all share one shape", async () => {
		const { broker } = await session();
		const names = Array.from(
			{ length: 49 },
			(_, i) => `parses fixture ${i} of the ${["ascii", "utf8", "latin1"][i % 3]} set`,
		);
		const lines = [".".repeat(200) + "X".repeat(49), "", "Failed tests:", ""];
		for (const [i, name] of names.entries()) {
			lines.push(
				`✖ ${name} (0.${i + 1}ms)`,
				"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
				"",
			);
			for (let frame = 0; frame < 12; frame++)
				lines.push(`      at Test.run (node:internal/test_runner/test:${796 + frame}:25)`);
		}
		const result = await broker.observe(
			input(`${lines.join("\n")}\n`, { tool: "bash", command: "node --test --test-reporter=dot" }),
		);
		expect(result.decision).toBe("structured-capsule");
		expect(result.text).toContain("FAILING_TESTS (49, all listed):");
		for (const name of names) expect(result.text).toContain(`\n${name}\n`);
		expect(result.text).not.toMatch(/✖ .*lines of this shape/);
	});

	it("never promotes Markdown bullet prose over failure evidence in a compact failure capsule", async () => {
		const s = await session();
		await s.broker.observe(input(pythonSource(12_000, "a")));
		await s.broker.observe(input(pythonSource(12_000, "b")));
		const requirements = Array.from(
			{ length: 120 },
			(_, i) => `- Requirement ${i}: the exporter must fail fast with a clear error when field ${i} is missing`,
		);
		const failure = [
			"Traceback (most recent call last):",
			'  File "/srv/app/export.py", line 214, in export_rows',
			"    raise KeyError(field)",
			"KeyError: 'customer_id'",
		];
		const text = `${requirements.join("\n")}\n${failure.join("\n")}\n`;
		expect(text.length).toBeGreaterThan(8192);
		expect(text.length).toBeLessThan(DEFAULT_CONFIG.minTextBytes);
		const result = await s.broker.observe(input(text, { exitCode: 1 }));
		expect(result.decision).toBe("structured-capsule");
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(1536);
		expect(result.text).toContain("124: KeyError: 'customer_id'");
		expect(result.text).toContain(`122: ${failure[1]}`);
		expect(result.text).not.toMatch(/^\d+: - Requirement/m);
		expect(result.text).toContain("startLine=104 endLine=124");
	});
});

describe("determinism, state and metrics", () => {
	const sequence = (): ObservationInput[] => [
		input(pythonSource(30_000)),
		input("short"),
		input(pythonSource(12_000, "m1")),
		input(pythonSource(30_000), { tool: "bash" }),
		input(pytestRun(9, "0.1"), { exitCode: 0 }),
		input(pytestRun(9, "0.2"), { exitCode: 0 }),
		input(pythonSource(12_000, "m2")),
		input(pythonSource(12_000, "m3")),
	];

	it("gives the same results for the same inputs in the same order", async () => {
		const a = await session();
		const b = await session();
		const ra = [];
		const rb = [];
		for (const i of sequence()) ra.push(await a.broker.observe(i));
		for (const i of sequence()) rb.push(await b.broker.observe(i));
		expect(rb).toEqual(ra);
		expect(ra.map((r) => r.decision)).toEqual([
			"structured-capsule",
			"pass-through",
			"pass-through",
			"delta-capsule",
			"pass-through",
			// A short repeat of a test outcome is new text, so it passes through (the seed).
			"pass-through",
			"pass-through",
			"structured-capsule",
		]);
	});

	it("loses no observation or metric when two brokers of one session observe at the same time", async () => {
		const s = await session();
		const other = await s.reopen();
		const results = await Promise.all(
			Array.from({ length: 12 }, (_, i) =>
				(i % 2 === 0 ? s.broker : other.broker).observe(input(`result ${i}\n${"y".repeat(i * 10)}`)),
			),
		);
		expect(new Set(results.map((r) => r.id)).size).toBe(12);
		const metrics = await s.broker.metrics();
		expect(metrics.decisions["pass-through"]).toBe(12);
	});

	it("counts decisions, visible bytes saved and recovery calls, shared across processes", async () => {
		const s = await session();
		const big = pythonSource(30_000);
		const capsule = await s.broker.observe(input(big));
		await s.broker.observe(input("tiny"));
		await s.broker.recordRecovery("read", true);
		const other = await s.reopen();
		await other.broker.recordRecovery("search", false);
		const metrics = await s.broker.metrics();
		expect(metrics.decisions).toEqual({ "pass-through": 1, "structured-capsule": 1, "delta-capsule": 0 });
		expect(metrics.visibleBytesSaved).toBe(Buffer.byteLength(big) - Buffer.byteLength(capsule.text));
		expect(metrics.recovery).toEqual({ calls: { read: 1, search: 1 }, withEvidence: 1, empty: 1 });
	});

	it("counts the complete output's bytes as saved, not only the visible head a host handed in", async () => {
		const s = await session();
		const dir = await tempDir("broker-complete-");
		const path = join(dir, "out.txt");
		const full = pythonSource(3_000_000);
		await writeFile(path, full);
		const head = full.slice(0, 1024 * 1024);
		const result = await s.broker.observe(input(head, { fullOutputPath: path }));
		expect(result.decision).toBe("structured-capsule");
		const metrics = await s.broker.metrics();
		expect(metrics.visibleBytesSaved).toBe(Buffer.byteLength(full) - Buffer.byteLength(result.text));
	});

	it("counts status, list and update calls, but only reads and searches as evidence or its absence", async () => {
		const s = await session();
		await s.broker.observe(input("tiny"));
		await s.broker.recordRecovery("status", true);
		await s.broker.recordRecovery("list", true);
		await s.broker.recordRecovery("read", false);
		const metrics = await s.broker.metrics();
		expect(metrics.recovery).toEqual({ calls: { status: 1, list: 1, read: 1 }, withEvidence: 0, empty: 1 });
	});

	it("records nothing, and creates nothing, for a session that has no directory yet", async () => {
		const root = await tempDir("broker-none-");
		const archive = await openSessionArchive({ root, sessionId: "typo" });
		const broker = await createBroker({ archive, config: DEFAULT_CONFIG });
		await broker.recordRecovery("list", true);
		expect(existsSync(archive.dir)).toBe(false);
	});
});

const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs/", import.meta.url));
describe(`clean repetitive success (fixture 016 in ${FIXTURES})`, () => {
	it("keeps the terminal summary and a short head in at most 768 bytes, with no Read or Search hint", async () => {
		const text = readFileSync(join(FIXTURES, "016-mi-unittest-pass-verbose", "output.txt"), "utf8");
		const { broker } = await session();
		const result = await broker.observe(input(text, { tool: "bash", exitCode: 0 }));
		expect(result.decision).toBe("structured-capsule");
		expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(768);
		expect(result.text).toContain("TEST_RESULT PASS");
		expect(result.text).toMatch(/\d+: (Ran \d+ tests|OK)/);
		expect(result.text).not.toMatch(hints);
	});
});
