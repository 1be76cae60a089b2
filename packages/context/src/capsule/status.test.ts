import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseOutcome } from "../outcome/index.js";
import type { Outcome } from "../types.js";
import { exceptionsLine, outcomeHeadline, runStatus, statusLines } from "./status.js";

/** A real output of the labelled corpus: pytest fails 2 of 4, then node's test runner passes 3 of 3 (exit 0). */
const TWO_RUNNERS = readFileSync(
	fileURLToPath(new URL("../../../../fixtures/outputs/082-pytest-then-node-test-spec/output.txt", import.meta.url)),
	"utf8",
);

function outcome(partial: Partial<Outcome>): Outcome {
	return {
		runner: null,
		status: "unknown",
		counts: null,
		failingIds: [],
		exceptions: [],
		locations: [],
		summaryLines: [],
		exitCode: null,
		...partial,
	};
}

describe("status lines", () => {
	it("never reads as passing when the exit code, the tool or the outcome says otherwise", () => {
		const passing = outcome({ runner: "pytest", status: "pass", counts: { passed: 9 }, summaryLines: [20] });
		expect(outcomeHeadline(passing, { isError: false, exitCode: 0 })).toBe("TEST_RESULT PASS 9/9");
		expect(runStatus(passing, { isError: false, exitCode: 1 })).toBe("fail");
		expect(outcomeHeadline(passing, { isError: true, exitCode: 0 })).not.toContain("PASS");
		expect(outcomeHeadline(outcome({}), { isError: false, exitCode: 0 })).toBe("COMMAND_RESULT exit 0");
		expect(outcomeHeadline(outcome({}), { isError: false })).toBeNull();
	});

	it("lists every exception type, with lines for the first few", () => {
		const exceptions = ["KeyError", "KeyError", "TypeError", "E1", "E2", "E3", "E4", "E5"].map((type, i) => ({
			type,
			message: "",
			line: 10 + i,
		}));
		expect(exceptionsLine(outcome({ exceptions }))).toBe(
			"EXCEPTIONS: KeyError x2 (first at line 10), TypeError (line 12), E1 (line 13), E2 (line 14), E3 (line 15), E4 (line 16), E5",
		);
	});

	it("counts the distinct exceptions past the recorded ones, so no count reads as exact when it is not", () => {
		const lines = Array.from({ length: 1000 }, (_, i) => [`E   AssertionError: assert ${i} == -1`, ""]).flat();
		const parsed = parseOutcome(lines.join("\n"));
		expect(parsed.exceptions).toHaveLength(500);
		expect(parsed.unrecordedExceptions).toBe(500);
		expect(exceptionsLine(parsed)).toBe(
			"EXCEPTIONS: AssertionError x500 (first at line 1), and 500 more past the first 500 recorded",
		);
		// The same exceptions again (a summary repeating them) add nothing.
		expect(parseOutcome([...lines, ...lines].join("\n")).unrecordedExceptions).toBe(500);
	});

	it("states each suite's result under the sum of their counts, and fails when any suite failed", () => {
		expect(statusLines(parseOutcome(TWO_RUNNERS), { isError: false, exitCode: 0 })).toEqual([
			"TEST_RESULT FAIL 2 failed, 5 passed (sum of 2 suites), exit 0",
			"SUITE FAIL 2 failed, 2 passed (pytest, line 36)",
			"SUITE PASS 3/3 (node-test, line 43)",
		]);
	});

	it("lists at most eight suites, the failed ones first, and counts the others", () => {
		// Six logs of the same two runs put together: six failing pytest suites, six passing node suites.
		const lines = statusLines(parseOutcome(TWO_RUNNERS.repeat(6)), { isError: false });
		expect(lines[0]).toBe("TEST_RESULT FAIL 12 failed, 30 passed (sum of 12 suites)");
		expect(lines.slice(1, 9).map((line) => line.replace(/ \(.*/, ""))).toEqual([
			"SUITE FAIL 2 failed, 2 passed",
			"SUITE PASS 3/3",
			"SUITE FAIL 2 failed, 2 passed",
			"SUITE PASS 3/3",
			"SUITE FAIL 2 failed, 2 passed",
			"SUITE FAIL 2 failed, 2 passed",
			"SUITE FAIL 2 failed, 2 passed",
			"SUITE FAIL 2 failed, 2 passed",
		]);
		expect(lines.slice(9)).toEqual(["SUITES: and 4 more, none of them failed"]);
		// Past the listed suites, the failed ones between are counted.
		const many = statusLines(parseOutcome(TWO_RUNNERS.repeat(60)), { isError: false });
		expect(many[0]).toBe("TEST_RESULT FAIL 120 failed, 300 passed (sum of 120 suites)");
		expect(many.slice(-1)).toEqual(["SUITES: and 112 more, 52 of them failed"]);
	});
});
