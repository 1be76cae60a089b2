import { describe, expect, it } from "vitest";
import { parseOutcome } from "../outcome/index.js";
import type { Outcome } from "../types.js";
import { exceptionsLine, outcomeHeadline, runStatus } from "./status.js";

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
});
