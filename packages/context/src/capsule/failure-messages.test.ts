import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { capsuleFor } from "../../test/capsule-for.js";
import { unescapeXmlText } from "./escape.js";

/** The labelled corpus of real runner outputs, in the repository's `fixtures/`. */
const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs/", import.meta.url));

function corpusCase(name: string): { text: string; exitCode: number; failingIds: string[] } {
	const meta = JSON.parse(readFileSync(`${FIXTURES}${name}/meta.json`, "utf8"));
	return {
		text: readFileSync(`${FIXTURES}${name}/output.txt`, "utf8"),
		exitCode: meta.exit_code,
		failingIds: meta.failing_ids,
	};
}

/** The capsule's failure-message lines, unescaped: from `FIRST_FAILURE:` up to the failing ids (or what follows). */
function messageBlock(capsule: string): string[] {
	const rows = capsule.split("\n");
	const start = rows.indexOf("FIRST_FAILURE:");
	if (start < 0) return [];
	let end = start + 1;
	while (end < rows.length && /^(?:\d+: |OTHER_FAILURE_MESSAGES )/.test(rows[end])) end++;
	return rows.slice(start, end).map(unescapeXmlText);
}

function capsuleOf(name: string, budget?: number) {
	const run = corpusCase(name);
	return { run, capsule: capsuleFor(run.text, { exitCode: run.exitCode, budget }) };
}

describe("failure messages", () => {
	it("show a pytest run's first failure and its other distinct message ahead of 287 failing ids that fill the capsule", () => {
		const { run, capsule } = capsuleOf("086-local-pytest-287-failures-fill-capsule");
		expect(messageBlock(capsule.text)).toEqual([
			"FIRST_FAILURE:",
			"47: E       assert (3 % 7) != 3 [x286 lines of this shape]",
			"49: tests/test_mod.py:6: AssertionError",
			"OTHER_FAILURE_MESSAGES (one example of each):",
			"2913: E       ValueError: bad config '3'",
			"2915: tests/test_other.py:2: ValueError",
		]);
		// The ids fill the budget: no excerpt fits, every id is listed, and the messages come first.
		expect(capsule.recoveryOnly).toBe(true);
		expect(capsule.text).toContain("FAILING_TESTS (287, all listed):");
		const shown = unescapeXmlText(capsule.text);
		expect(run.failingIds.filter((id) => !shown.includes(id)).length).toBe(0);
		expect(capsule.text.indexOf("FIRST_FAILURE:")).toBeLessThan(capsule.text.indexOf("FAILING_TESTS ("));
		// Everything but the failing-id block fits the 6 KiB budget; the whole stays under the 4x ceiling.
		const ids = capsule.text.slice(capsule.text.indexOf("FAILING_TESTS ("), capsule.text.indexOf("Read exact"));
		expect(Buffer.byteLength(capsule.text) - Buffer.byteLength(ids)).toBeLessThanOrEqual(6144);
		expect(Buffer.byteLength(capsule.text)).toBe(10_593);
	});

	it("give way to failing ids that fit the ceiling only without them, and take what the ids leave", () => {
		// At 2,576 bytes the 287 ids fit the 4x ceiling only alone; 16 bytes more leave room for the first failure.
		const tight = capsuleOf("086-local-pytest-287-failures-fill-capsule", 2576).capsule;
		expect(tight.text).toContain("FAILING_TESTS (287, all listed):");
		expect(messageBlock(tight.text)).toEqual([]);
		expect(Buffer.byteLength(tight.text)).toBeLessThanOrEqual(4 * 2576);
		const roomier = capsuleOf("086-local-pytest-287-failures-fill-capsule", 2592).capsule;
		expect(roomier.text).toContain("FAILING_TESTS (287, all listed):");
		expect(messageBlock(roomier.text)).toEqual([
			"FIRST_FAILURE:",
			"47: E       assert (3 % 7) != 3 [x286 lines of this shape]",
			"49: tests/test_mod.py:6: AssertionError",
		]);
		expect(Buffer.byteLength(roomier.text)).toBeLessThanOrEqual(4 * 2592);
	});

	it("show unittest's message with the last frame above it, and one example of each other exception type", () => {
		const block = messageBlock(capsuleOf("017-mi-unittest-take-offbyone").capsule.text);
		expect(block.slice(0, 3)).toEqual([
			"FIRST_FAILURE:",
			'10:   File "/home/dev/work/more-itertools/more_itertools/recipes.py", line 126, in take',
			"13: TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
		]);
		// Each exception type first; then, as room allows, other messages of a type shown.
		expect(block.filter((row) => /^\d+: +(?:TypeError|ValueError|AssertionError|NameError): /.test(row))).toEqual([
			"13: TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
			"25: ValueError: iterable is not divisible by n.",
			"42: AssertionError: Lists differ: [1, 10, 11, 12] != [1, 10, 11]",
			"688:     NameError: name 'second' is not defined",
			"34: ValueError: too many values to unpack (expected 3)",
			"60: AssertionError: Lists differ: [['A', 'B', 'C', 'D'], ['E', 'F']] != [['A', 'B', 'C'], ['D', 'E', 'F']]",
		]);
	});

	it("show jest's matcher message under the test's title, with its values and the test's frame", () => {
		expect(messageBlock(capsuleOf("025-ms-jest-plural-threshold").capsule.text)).toEqual([
			"FIRST_FAILURE:",
			"4:     expect(received).toBe(expected) // Object.is equality",
			'6:     Expected: "1 second"',
			'7:     Received: "1 seconds"',
			"17:       at Object.<anonymous> (src/index.test.ts:156:38)",
		]);
	});

	it("show vitest's assertion with the frame below it", () => {
		expect(messageBlock(capsuleOf("028-ptr-vitest-escape-regex").capsule.text).slice(0, 3)).toEqual([
			"FIRST_FAILURE:",
			"517: AssertionError: expected { path: '/route.html', …(1) } to deeply equal { path: '/route.html', …(1) }",
			"532:  ❯ src/index.spec.ts:266:27",
		]);
	});

	it("show mocha's assertion, the line that carries it on, and the test's frame", () => {
		const block = messageBlock(capsuleOf("041-jsyaml-mocha-timestamp-month").capsule.text);
		expect(block.slice(0, 4)).toEqual([
			"FIRST_FAILURE:",
			"327:       AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal: [x4 identical lines]",
			"328: + actual - expected",
			"359:       at Context.<anonymous> (test/10-loader.js:34:16)",
		]);
		expect(block).toContain("500:       AssertionError [ERR_ASSERTION]: month");
	});

	it("show node:test's assertion with the project's frame below it", () => {
		expect(messageBlock(capsuleOf("036-mime-node-test-getext-spec").capsule.text).slice(0, 3)).toEqual([
			"FIRST_FAILURE:",
			"9:     AssertionError [ERR_ASSERTION]: class Mime:  text/html, html",
			"10:         at testGetExtension (file:///home/dev/work/mime/test/test_util.js:15:12)",
		]);
	});

	it("show cargo's panic with its message and no runtime frame", () => {
		expect(messageBlock(capsuleOf("059-semver-cargo-test-greater-flip").capsule.text).slice(0, 3)).toEqual([
			"FIRST_FAILURE:",
			"69: thread 'test_greater_than' (9791) panicked at tests/test_version_req.rs:82:5:",
			"70: did not match 2.0.0",
		]);
	});

	it("are not shown for a passing run, and not repeated in the excerpt", () => {
		expect(messageBlock(capsuleOf("005-attrs-pass-verbose-color").capsule.text)).toEqual([]);
		const { capsule } = capsuleOf("017-mi-unittest-take-offbyone");
		expect(capsule.text.split("\n").filter((row) => row.startsWith("13: TypeError")).length).toBe(1);
	});
});
