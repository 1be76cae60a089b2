/**
 * The broker tests' common setup: a fresh session (removed after the file's tests), an observation
 * input, and outputs of real shape (pytest runs, node's TAP, a Python source) to observe.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { openSessionArchive } from "../src/archive/index.js";
import { createBroker } from "../src/broker/index.js";
import { type ContextConfig, DEFAULT_CONFIG, type ObservationInput } from "../src/types.js";

const roots: string[] = [];
afterAll(async () => {
	await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

export async function tempDir(prefix: string): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), prefix));
	roots.push(dir);
	return dir;
}

/** A fresh session; `reopen` gives another broker on the same session, as a separate process would. */
export async function session(config: ContextConfig = DEFAULT_CONFIG) {
	const root = await tempDir("broker-");
	const open = async () => {
		const archive = await openSessionArchive({ root, sessionId: "s" });
		return { archive, broker: await createBroker({ archive, config }) };
	};
	const first = await open();
	return { root, ...first, reopen: open };
}

export const input = (text: string, extra: Partial<ObservationInput> = {}): ObservationInput => ({
	tool: "ipython",
	text,
	isError: false,
	...extra,
});

/** A Python source file of about `bytes` bytes with numbered, distinct functions. */
export function pythonSource(bytes: number, tag = "v1"): string {
	const out: string[] = [];
	let size = 0;
	for (let i = 0; size < bytes; i++) {
		const fn = `def handler_${i}(request, retries=${i % 7}):\n    """Handle request kind ${i} (${tag})."""\n    return route(request, "${i.toString(36)}-${tag}", retries)\n\n`;
		out.push(fn);
		size += fn.length;
	}
	return out.join("");
}

export function pytestRun(passed: number, seconds: string, wrapper = "rootdir: /srv/project"): string {
	const lines = [
		"============================= test session starts ==============================",
		"platform linux -- Python 3.11.7, pytest-9.1.1, pluggy-1.6.0",
		wrapper,
		`collected ${passed} items`,
		"",
	];
	for (let i = 1; i <= passed; i++) {
		lines.push(`tests/test_api.py::test_case_${i} PASSED${" ".repeat(40)}[${Math.round((100 * i) / passed)}%]`);
	}
	lines.push("", `============================== ${passed} passed in ${seconds}s ===============================`);
	return `${lines.join("\n")}\n`;
}

/** A pytest run of 400 passing tests and one failure with `message`, raised at `line`. */
export function failingPytest(message: string, line: number, seconds: string): string {
	return [
		...Array.from({ length: 400 }, (_, i) => `tests/test_calc.py::test_case_${i} PASSED${" ".repeat(30)}[ 50%]`),
		"=================================== FAILURES ===================================",
		"_________________________________ test_total __________________________________",
		`E       ZeroDivisionError: ${message}`,
		`tests/test_calc.py:${line}: ZeroDivisionError`,
		"=========================== short test summary info ============================",
		`FAILED tests/test_calc.py::test_total - ZeroDivisionError: ${message}`,
		`========================= 1 failed, 400 passed in ${seconds}s ==========================`,
		"",
	].join("\n");
}

/** node --test's TAP output of one failing `assert.strictEqual(1, expected)` among 400 passing tests. */
export function failingNodeTap(expected: number, ms: string): string {
	const passing = Array.from({ length: 400 }, (_, i) => [
		`# Subtest: passing ${i}`,
		`ok ${i + 1} - passing ${i}`,
		"  ---",
		`  duration_ms: 0.${i}${ms}`,
		"  ...",
	]);
	return [
		"TAP version 13",
		...passing.flat(),
		"# Subtest: compare",
		"not ok 401 - compare",
		"  ---",
		`  duration_ms: ${ms}`,
		"  location: '/srv/app/d.test.mjs:4:1'",
		"  failureType: 'testCodeFailure'",
		"  error: |-",
		"    Expected values to be strictly equal:",
		"    ",
		`    1 !== ${expected}`,
		"    ",
		"  code: 'ERR_ASSERTION'",
		"  name: 'AssertionError'",
		`  expected: ${expected}`,
		"  actual: 1",
		"  operator: 'strictEqual'",
		"  ...",
		"1..401",
		"# tests 401",
		"# pass 400",
		"# fail 1",
		`# duration_ms ${ms}`,
		"",
	].join("\n");
}
