import { describe, expect, it } from "vitest";
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
});
