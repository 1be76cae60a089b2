import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
	failingNodeTap,
	failingPytest,
	input,
	pytestRun,
	pythonSource,
	session,
	tempDir,
} from "../../test/broker-session.js";

describe("deltas", () => {
	it("turns an exact repeat from any tool into an unchanged delta naming the earlier id", async () => {
		const { broker } = await session();
		const text = pythonSource(30_000);
		const first = await broker.observe(input(text, { tool: "ipython" }));
		const again = await broker.observe(input(text, { tool: "bash" }));
		expect(again.decision).toBe("delta-capsule");
		expect(again.text).toContain(`identical to ${first.id} (returned by ipython)`);
		expect(again.text).toContain(`<prime_context_output id="${again.id}" tool="bash"`);
	});

	it("finds an exact repeat of an observation older than the ones it keeps in memory", async () => {
		const { broker } = await session();
		const text = pythonSource(30_000, "old");
		const first = await broker.observe(input(text));
		for (let i = 0; i < 20; i++) await broker.observe(input(`step ${i}: ${"x".repeat(i)}`));
		const again = await broker.observe(input(text));
		expect(again.decision).toBe("delta-capsule");
		expect(again.text).toContain(`identical to ${first.id}`);
	});

	it("finds an exact repeat of a large complete-output file by size, then by streaming", async () => {
		const { broker } = await session();
		const dir = await tempDir("repeat-large-");
		const body = pythonSource(1_300_000);
		await writeFile(join(dir, "a.txt"), body);
		await writeFile(join(dir, "b.txt"), body);
		const first = await broker.observe(input("", { fullOutputPath: join(dir, "a.txt") }));
		const second = await broker.observe(input("", { fullOutputPath: join(dir, "b.txt") }));
		expect(second.decision).toBe("delta-capsule");
		expect(second.text).toContain(`identical to ${first.id}`);
		const changed = `${body.slice(0, -10)}XXXXXXXXX\n`;
		await writeFile(join(dir, "c.txt"), changed);
		const third = await broker.observe(input("", { fullOutputPath: join(dir, "c.txt") }));
		expect(third.text).not.toContain("UNCHANGED");
	});

	it("reports a semantically identical test outcome as unchanged even when wrapper text differs", async () => {
		const { broker } = await session();
		const first = await broker.observe(input(pytestRun(300, "0.12"), { tool: "bash", exitCode: 0 }));
		const second = await broker.observe(
			input(pytestRun(300, "0.31", "rootdir: /srv/project, configfile: pyproject.toml"), {
				tool: "bash",
				exitCode: 0,
			}),
		);
		expect(second.decision).toBe("delta-capsule");
		expect(second.text).toContain(`TEST_RESULT PASS 300/300 unchanged since ${first.id}`);
		// A short run with the same outcome is new text: it passes through.
		await broker.observe(input(pytestRun(9, "0.12"), { tool: "bash", exitCode: 0 }));
		const short = await broker.observe(input(pytestRun(9, "0.31"), { tool: "bash", exitCode: 0 }));
		expect(short.decision).toBe("pass-through");
	});

	it("reports an identical failing outcome as unchanged, still listing the failing ids and exception types", async () => {
		const { broker } = await session();
		const run = (seconds: string) => failingPytest("division by zero", 12, seconds);
		const first = await broker.observe(input(run("0.12"), { tool: "bash", exitCode: 1 }));
		const second = await broker.observe(input(run("0.47"), { tool: "bash", exitCode: 1 }));
		expect(second.decision).toBe("delta-capsule");
		expect(second.text).toContain(`TEST_RESULT FAIL 1 failed, 400 passed, exit 1 unchanged since ${first.id}`);
		expect(second.text).toContain("tests/test_calc.py::test_total");
		expect(second.text).toContain("ZeroDivisionError");
		expect(second.text).not.toMatch(/\bPASS\b/);
	});

	it("never calls a failure unchanged when its message or its line changed", async () => {
		const { broker } = await session();
		const run = (message: string, line: number) => failingPytest(message, line, "0.12");
		await broker.observe(input(run("division by zero", 12), { tool: "bash", exitCode: 1 }));
		const message = await broker.observe(input(run("float division by zero", 12), { tool: "bash", exitCode: 1 }));
		expect(message.decision).toBe("structured-capsule");
		expect(message.text).toContain("float division by zero");
		const line = await broker.observe(input(run("float division by zero", 31), { tool: "bash", exitCode: 1 }));
		expect(line.decision).toBe("structured-capsule");
		expect(line.text).toContain("tests/test_calc.py:31");
	});

	it("never calls a failure unchanged when only the lines saying why it failed changed", async () => {
		const { broker } = await session();
		const first = await broker.observe(input(failingNodeTap(2, "3.4988"), { tool: "bash", exitCode: 1 }));
		expect(first.decision).toBe("structured-capsule");
		// `1 !== 3` and `expected: 3` are none of failure, exception, error or location lines.
		const changed = await broker.observe(input(failingNodeTap(3, "3.4988"), { tool: "bash", exitCode: 1 }));
		expect(changed.decision).toBe("structured-capsule");
		expect(changed.text).not.toContain("unchanged since");
		// The same failure again, with other durations: unchanged.
		const again = await broker.observe(input(failingNodeTap(3, "8.2094"), { tool: "bash", exitCode: 1 }));
		expect(again.decision).toBe("delta-capsule");
		expect(again.text).toContain(`TEST_RESULT FAIL 1 failed, 400 passed, exit 1 unchanged since ${changed.id}`);
	});

	it("never calls a run unchanged when the diff printed before the same failure changed", async () => {
		const { broker } = await session();
		const diff = (line: string) => [
			"diff --git a/src/calc.py b/src/calc.py",
			"--- a/src/calc.py",
			"+++ b/src/calc.py",
			"@@ -3 +3 @@",
			"-    return a / b",
			`+${line}`,
		];
		const run = (line: string, seconds: string) =>
			`${diff(line).join("\n")}\n${failingPytest("division by zero", 12, seconds)}`;
		const first = await broker.observe(input(run("    return a / max(b, 1)", "0.12"), { tool: "bash", exitCode: 1 }));
		// A duration in a file's text is the file's: a diff changing only `5s` to `10s` is a change.
		const timeout = await broker.observe(input(run("    timeout = '5s'", "0.12"), { tool: "bash", exitCode: 1 }));
		expect(timeout.decision).toBe("structured-capsule");
		const changed = await broker.observe(input(run("    timeout = '10s'", "0.12"), { tool: "bash", exitCode: 1 }));
		expect(changed.decision).toBe("structured-capsule");
		expect(changed.text).not.toContain("unchanged since");
		// The same diff and the same failure, another duration: unchanged.
		const again = await broker.observe(input(run("    timeout = '10s'", "0.47"), { tool: "bash", exitCode: 1 }));
		expect(again.decision).toBe("delta-capsule");
		expect(again.text).toContain(`unchanged since ${changed.id}`);
		expect(first.id).not.toBe(changed.id);
	});

	it("never turns a changed test count into a delta", async () => {
		const { broker } = await session();
		await broker.observe(input(pytestRun(300, "1.0"), { tool: "bash", exitCode: 0 }));
		const changed = await broker.observe(input(pytestRun(301, "1.0"), { tool: "bash", exitCode: 0 }));
		expect(changed.decision).not.toBe("delta-capsule");
		expect(changed.text).toContain("301");
	});

	it("shows only the changed section of a changed document, with every new line", async () => {
		const { broker } = await session();
		const before = pythonSource(10_000);
		const first = await broker.observe(input(before));
		const after = before.replace(
			'"""Handle request kind 40 (v1)."""',
			'"""Handle request kind 40, now with retries (v1)."""\n    log(request)',
		);
		const result = await broker.observe(input(after));
		expect(result.decision).toBe("delta-capsule");
		expect(result.text).toContain(`CHANGED SECTION: compared with ${first.id}`);
		expect(result.text).toContain('+    """Handle request kind 40, now with retries (v1)."""');
		expect(result.text).toContain("+    log(request)");
		expect(Buffer.byteLength(result.text)).toBeLessThan(after.length * 0.3);
	});

	it("compares with a recent large observation from memory, as a broker reading it back from the archive would", async () => {
		// Larger than the state's kept texts: without the broker's memory it is read back from the archive.
		const doc = pythonSource(300_000);
		const composite = `$ python -m build\nSuccessfully built package-1.0.tar.gz\n${doc}`;
		const kept = await session();
		await kept.broker.observe(input(doc));
		const fromMemory = await kept.broker.observe(input(composite));
		const reread = await session();
		await reread.broker.observe(input(doc));
		const fromArchive = await (await reread.reopen()).broker.observe(input(composite));
		expect(fromMemory.decision).toBe("delta-capsule");
		expect(fromMemory.text).toBe(fromArchive.text);
		// With the earlier archives gone, only the broker that holds their texts can still compare.
		for (const id of ["obs_000001", "obs_000002"]) {
			await rm(join(kept.archive.dir, id, "output.gz"));
			await rm(join(reread.archive.dir, id, "output.gz"));
		}
		const changed = `$ python -m build --wheel\n${doc}`;
		expect((await kept.broker.observe(input(changed))).decision).toBe("delta-capsule");
		expect((await (await reread.reopen()).broker.observe(input(changed))).decision).toBe("structured-capsule");
	});

	it("replaces exact earlier sections of composite output with markers and keeps the novel part", async () => {
		const { broker } = await session();
		const doc = pythonSource(30_000);
		const earlier = await broker.observe(input(doc));
		const novel = ["$ python -m build", "Successfully built package-1.0.tar.gz", "warning: no license file"];
		const composite = `${novel.join("\n")}\n${doc}`;
		const result = await broker.observe(input(composite));
		expect(result.decision).toBe("delta-capsule");
		expect(result.text).toMatch(new RegExp(`unchanged: identical to ${earlier.id} lines 1-\\d+`));
		novel.forEach((line, i) => {
			expect(result.text).toContain(`${i + 1}: ${line}`);
		});
	});

	it("keeps a composite output whose novel part is more than 30% as a structured capsule", async () => {
		const { broker } = await session();
		const doc = pythonSource(20_000, "old");
		await broker.observe(input(doc));
		const result = await broker.observe(input(`${pythonSource(15_000, "new")}${doc}`));
		expect(result.decision).toBe("structured-capsule");
	});
});
