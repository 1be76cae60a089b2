import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as PrimeContext from "../src/index.js";
import { DIST_INDEX, requireBuild } from "./cli-process.js";

/**
 * The selection thread exists only in the built package (the sources have no compiled worker
 * entry), so these tests load `dist/` and compare its observations on the thread with the same
 * observations selected in place, capsule for capsule.
 */
const FIXTURES = fileURLToPath(new URL("../../../fixtures/outputs/", import.meta.url));

let pc: typeof PrimeContext;
let dir: string;
let sessions = 0;

beforeAll(async () => {
	requireBuild();
	pc = (await import(pathToFileURL(DIST_INDEX).href)) as typeof PrimeContext;
	dir = await mkdtemp(join(tmpdir(), "pc-thread-"));
});
afterAll(async () => {
	await pc.closeSelectionThread();
	await rm(dir, { recursive: true, force: true });
});

type Input = PrimeContext.ObservationInput;

/** One observation in a fresh session: its id is always the first, so results compare as text. */
async function observe(input: Input): Promise<PrimeContext.ObservationResult> {
	const archive = await pc.openSessionArchive({ root: dir, sessionId: `s${++sessions}` });
	const broker = await pc.createBroker({ archive, config: pc.DEFAULT_CONFIG });
	return broker.observe(input);
}

/** Resolves once `ready()` holds, checking after every turn of the event loop (no fixed sleep). */
async function until(ready: () => boolean): Promise<void> {
	while (!ready()) await new Promise((resolve) => setImmediate(resolve));
}

/** The observation selected in place: with the thread stopped, the next observation starts it and does not wait. */
async function inPlace(input: Input): Promise<PrimeContext.ObservationResult> {
	await pc.closeSelectionThread();
	const before = pc.selectionThreadJobs().selected;
	const result = await observe(input);
	expect(pc.selectionThreadJobs().selected).toBe(before);
	return result;
}

/** Starts the thread (two large observations) and waits until it runs. */
async function startThread(): Promise<void> {
	if (pc.selectionThreadRunning()) return;
	for (let i = 0; i < 2; i++) await observe({ tool: "bash", text: "warm-up\n".repeat(600_000), isError: false });
	await until(() => pc.selectionThreadRunning());
}

/** The observation selected on the running thread (asserted: the thread answered one more job). */
async function onThread(input: Input): Promise<PrimeContext.ObservationResult> {
	await startThread();
	const before = pc.selectionThreadJobs().selected;
	const result = await observe(input);
	expect(pc.selectionThreadJobs().selected).toBe(before + 1);
	return result;
}

const fixtureText = (name: string) => readFileSync(join(FIXTURES, name, "output.txt"), "utf8");

/** Real outputs of every family, about 4.8 MB (the thread takes 4 MiB and more): pytest, mocha, git diff, tsc and more. */
function mixedLog(): string {
	const names = readdirSync(FIXTURES).sort();
	let text = "";
	for (const name of names) {
		if (text.length > 1_200_000) break;
		const output = fixtureText(name);
		if (output.length < 400_000) text += `${output}\n`;
	}
	return text.repeat(4);
}

const passing = (count: number) =>
	Array.from(
		{ length: count },
		(_, i) => `tests/test_mod.py::test_case_${i} PASSED [${Math.floor((i * 100) / count)}%]`,
	);

describe("line selection on its own thread", () => {
	it("gives every observation the capsule it gets in place", async () => {
		const mixed = mixedLog();
		const inputs: Input[] = [
			{ tool: "bash", command: "cat run.log", exitCode: 1, isError: true, text: mixed },
			// No exit status: the capsule's status rests on the failure-shaped lines the thread saw.
			{ tool: "bash", command: "cat run.log", text: mixed, isError: false },
			{
				tool: "bash",
				command: "pytest --cov",
				text: [
					...passing(100_000),
					"FAIL Required test coverage of 90% not reached. Total coverage: 71.20%",
					"======================== 100000 passed in 12.31s ========================",
				].join("\n"),
				isError: false,
			},
			// A diff's `+++ ` line is no error of this run, wherever the classifier would put it.
			{
				tool: "bash",
				command: "git diff; pytest",
				text: [
					"--- notes.txt",
					"+++ ERROR.txt",
					"@@ -1 +1 @@",
					"-old",
					"+new",
					...passing(100_000),
					"======================== 100000 passed in 12.31s ========================",
				].join("\n"),
				isError: false,
			},
		];
		for (const input of inputs) {
			const expected = await inPlace(input);
			const threaded = await onThread(input);
			expect(threaded.text).toBe(expected.text);
			expect(threaded.decision).toBe(expected.decision);
			expect(threaded.lines).toBe(expected.lines);
		}
		const statusOf = (text: string) => /TEST_RESULT (\S+)/.exec(text)?.[1];
		expect(statusOf((await onThread(inputs[2])).text)).toBe("FAIL");
		expect(statusOf((await onThread(inputs[3])).text)).toBe("PASS");
	}, 120_000);

	it("cuts a visible text with non-ASCII characters into the same lines as in place", async () => {
		// The thread reads the text's bytes in pieces of its own, which end elsewhere than the text's
		// pieces do here: a redrawn line straddles one boundary and not the other.
		const frame = `${"A".repeat(3000)}\r${"\u001b[m".repeat(1365)}X`;
		const text = `${"é".repeat(14_000)}\n${frame}\n${"✓ ok line\n".repeat(500_000)}✖ 1 failing\n`;
		const input: Input = { tool: "bash", command: "npm test", exitCode: 1, isError: true, text };
		const expected = await inPlace(input);
		expect((await onThread(input)).text).toBe(expected.text);
	}, 120_000);

	it("reads a complete-output file on the thread as in place", async () => {
		const path = join(dir, "complete.log");
		await writeFile(path, mixedLog());
		const input: Input = {
			tool: "bash",
			command: "make test",
			exitCode: 2,
			isError: true,
			text: "",
			fullOutputPath: path,
		};
		const expected = await inPlace(input);
		const threaded = await onThread(input);
		expect(threaded.source).toBe("public-complete-output");
		expect(threaded.text).toBe(expected.text);
	}, 120_000);

	it("selects again in place when the thread stops under a running observation", async () => {
		const input: Input = {
			tool: "bash",
			command: "cat run.log",
			exitCode: 1,
			isError: true,
			text: mixedLog().repeat(2),
		};
		const expected = await inPlace(input);
		await startThread();
		const before = pc.selectionThreadJobs().selected;
		const pending = observe(input);
		await until(() => pc.selectionThreadJobs().running === 1);
		await pc.closeSelectionThread();
		const result = await pending;
		expect(result.text).toBe(expected.text);
		expect(pc.selectionThreadJobs().selected).toBe(before);
		// The next large observation starts a new thread, and the one after uses it.
		expect((await onThread(input)).text).toBe(expected.text);
	}, 120_000);

	it("reads a complete-output file again when the thread stops, only if it is still the file first read", async () => {
		const path = join(dir, "again.log");
		const log = mixedLog().repeat(2);
		await writeFile(path, log);
		const input: Input = {
			tool: "bash",
			command: "make",
			exitCode: 2,
			isError: true,
			text: "tail of the log",
			fullOutputPath: path,
		};
		const expected = await inPlace(input);
		await startThread();
		const stopUnder = async (change?: () => Promise<void>) => {
			const pending = observe(input);
			await until(() => pc.selectionThreadJobs().running === 1);
			await change?.();
			await pc.closeSelectionThread();
			const result = await pending;
			await startThread();
			return result;
		};
		// Unchanged: read again, the same capsule.
		expect((await stopUnder()).text).toBe(expected.text);
		// Replaced meanwhile: one read's outcome is never paired with another's lines; the observation
		// falls back to the visible text, as for a file that fails mid-read.
		const replaced = await stopUnder(async () => {
			await writeFile(`${path}.new`, "all good\n".repeat(1000));
			await rename(`${path}.new`, path);
		});
		expect(replaced.source).toBe("visible-tool-result");
		expect(replaced.text).toBe("tail of the log");
	}, 120_000);
});
