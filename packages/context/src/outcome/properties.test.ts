import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyLine, createOutcomeScanner, parseOutcome } from "./index.js";

/** Lines drawn from real shapes plus arbitrary text, so the parsers meet both. */
const shapedLine = fc.oneof(
	fc.string({ maxLength: 120 }),
	fc.constantFrom(
		"==== 1 failed, 8 passed in 0.10s ====",
		"FAILED tests/test_x.py::test_y - ValueError: bad",
		"Traceback (most recent call last):",
		'  File "x.py", line 3, in f',
		"ValueError: bad",
		"  1 failing",
		"  1) suite",
		"       test:",
		"Ran 3 tests in 0.1s",
		"OK",
		"test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
		"Tests:       1 failed, 2 passed, 3 total",
		"@@ -1,2 +1,3 @@",
		"+++ b/x.py",
		"\u001b[31mred\u001b[0m",
		"",
	),
);

describe("properties over arbitrary output", () => {
	it("never throws, and streaming equals parsing the whole text", () => {
		fc.assert(
			fc.property(fc.array(shapedLine, { maxLength: 40 }), (lines) => {
				const whole = parseOutcome(lines.join("\n"));
				const scanner = createOutcomeScanner();
				lines.forEach((line, index) => {
					scanner.line(line, index + 1);
				});
				expect(scanner.finish()).toEqual(whole);
				for (const line of lines) classifyLine(line);
			}),
			{ numRuns: 300 },
		);
	});

	it("never reads output ending in a failed summary as a pass", () => {
		fc.assert(
			fc.property(fc.array(shapedLine, { maxLength: 30 }), (lines) => {
				const outcome = parseOutcome([...lines, "==== 2 failed, 5 passed in 0.3s ===="].join("\n"));
				expect(outcome.status).toBe("fail");
			}),
			{ numRuns: 300 },
		);
	});

	it("never reads a run with a non-zero exit status as a pass", () => {
		fc.assert(
			fc.property(fc.array(shapedLine, { maxLength: 30 }), fc.integer({ min: 1, max: 255 }), (lines, exitCode) => {
				expect(parseOutcome(lines.join("\n"), { exitCode }).status).toBe("fail");
			}),
			{ numRuns: 300 },
		);
	});
});
