import { describe, expect, it } from "vitest";
import type { Outcome } from "../types.js";
import { exceptionsLine, locationLines, outcomeHeadline, runStatus } from "./status.js";

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

	it("shows locations as literal file:line under a shared directory, counting what does not fit", () => {
		const locations = [
			...Array.from({ length: 40 }, (_, i) => ({ file: "/home/dev/proj/tests/test_a.py", line: 10 + i, at: i + 1 })),
			{ file: "/home/dev/proj/src/a.py", line: 7, at: 50 },
			{ file: "/usr/lib/python3.11/unittest/case.py", line: 600, at: 51 },
		];
		const lines = locationLines(outcome({ locations }), 400);
		expect(lines[0]).toBe("LOCATIONS (42, under /home/dev/proj/):");
		expect(lines.join(" ")).toContain("tests/test_a.py:10 tests/test_a.py:11");
		expect(lines[lines.length - 1]).toMatch(/^\(\+\d+ more locations: search the archive for a file name\)$/);
		expect(Buffer.byteLength(lines.join("\n"))).toBeLessThanOrEqual(400);
	});
});
