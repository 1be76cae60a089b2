import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_EXCERPT_LIMITS, resultExcerpt } from "./result-excerpt.js";

const fixture = (name: string) =>
	readFileSync(new URL(`../../../../fixtures/outputs/${name}/output.txt`, import.meta.url), "utf8");

/** The gaps an excerpt says it left out, in lines. */
const gaps = (excerpt: string) =>
	[...excerpt.matchAll(/^\[\.\.\. ([\d,]+) lines? not shown\]$/gm)].map((gap) => Number(gap[1].replace(/,/g, "")));

describe("what the summariser sees of a long tool result", () => {
	it("a verbose pytest run: the failing tests from the middle of 1,385, the tracebacks' exceptions and locations, the verdict", () => {
		// 134 KB, 1,510 lines: two failures at 96%, their tracebacks, then the short summary and the verdict.
		const log = fixture("006-attrs-validator-flip-verbose");
		const excerpt = resultExcerpt(log);
		const lines = excerpt.split("\n");
		for (const line of [
			"============================= test session starts ==============================",
			"tests/test_validators.py::TestMaxLen::test_check_valid[spam] FAILED      [ 96%]",
			"tests/test_validators.py::TestMaxLen::test_check_valid[value4] FAILED    [ 96%]",
			"E           ValueError: Length of 'value' must be <= 4: 4",
			"src/attr/validators.py:548: ValueError",
			"FAILED tests/test_validators.py::TestMaxLen::test_check_valid[spam] - ValueEr...",
			"===== 2 failed, 1374 passed, 8 skipped, 1 deselected, 1 xfailed in 10.55s ======",
		])
			expect(lines).toContain(line);
		// Every line is either shown or counted in a gap, in order.
		expect(lines.length - gaps(excerpt).length + gaps(excerpt).reduce((sum, n) => sum + n, 0)).toBe(
			log.split("\n").length,
		);
		expect(gaps(excerpt)[0]).toBe(1329);
		expect(excerpt.length).toBe(3919);
	});

	it("a run with more decisive lines than fit keeps the verdict and stays bounded", () => {
		// 43 KB: 33 failing tests, each traceback with its exception and a dozen locations.
		const log = fixture("012-mi-pytest-take-native-tb");
		const excerpt = resultExcerpt(log);
		expect(excerpt.split("\n")).toContain("33 failed, 703 passed, 21039 subtests passed in 23.34s");
		const { headChars, tailChars, decisiveChars, lineChars } = DEFAULT_EXCERPT_LIMITS;
		const gapNotes = gaps(excerpt).length * 40;
		expect(excerpt.length).toBeLessThanOrEqual(headChars + lineChars + tailChars + decisiveChars + gapNotes);
		expect(excerpt.length).toBeLessThan(log.length / 3);
	});

	it("a short result is shown whole; a long single line is cut with its size said", () => {
		const short = "x".repeat(DEFAULT_EXCERPT_LIMITS.wholeChars);
		expect(resultExcerpt(short)).toBe(short);
		const long = "y".repeat(100_000);
		expect(resultExcerpt(long)).toBe(`${"y".repeat(500)} [... 99,500 more characters]`);
	});
});
