import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { percentShown } from "./classify.js";
import { exceptionOf } from "./diagnostics.js";
import { classifyLine, createOutcomeScanner, parseOutcome, stripAnsi } from "./index.js";

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

	it("finds a percentage exactly where the progress pattern's percentage matches", () => {
		const percentage = /\b\d{1,3}(?:\.\d+)?\s?%/;
		const piece = fc.constantFrom(
			"%",
			" ",
			".",
			"1",
			"22",
			"333",
			"4444",
			"a",
			"_",
			"-",
			"[",
			"\u00a0",
			"\u3000",
			"\t",
			"é",
		);
		fc.assert(
			fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
				const line = pieces.join("");
				expect(percentShown(line)).toBe(percentage.test(line));
			}),
			{ numRuns: 20000 },
		);
		for (const line of [
			"[ 52%]",
			"1.5%",
			"1234%",
			"x1%",
			"_5 %",
			"5\u00a0%",
			"9.12345%",
			"1234.5%",
			"a.5%",
			"%5%",
			"12..5%",
		]) {
			expect(percentShown(line)).toBe(percentage.test(line));
		}
	});

	it("strips exactly the escape sequences of the five ANSI patterns tried one after another", () => {
		const esc = "\\u001b";
		// The alternatives as plain text reads them: CSI, OSC, charset, two-byte escape, 8-bit CSI.
		const reference = new RegExp(
			`${esc}\\[[0-?]*[ -/]*[@-~]|${esc}\\][^\\u0007${esc}]*(?:\\u0007|${esc}\\\\)|${esc}[()*+][0-9A-Za-z]|${esc}[@-Z\\\\-_]|\\u009b[0-?]*[ -/]*[@-~]`,
			"g",
		);
		const piece = fc.constantFrom(
			"\u001b",
			"\u009b",
			"[",
			"]",
			"(",
			"+",
			"0",
			"1",
			";",
			"m",
			"A",
			"\\",
			"\u0007",
			"-",
			"_",
			"@",
			"~",
			" ",
			"x",
			"?",
			"/",
		);
		fc.assert(
			fc.property(fc.array(piece, { minLength: 1, maxLength: 12 }), (pieces) => {
				const line = pieces.join("");
				expect(stripAnsi(line)).toBe(line.replace(reference, ""));
			}),
			{ numRuns: 20000 },
		);
	});

	it("reads `Type: message` exactly as the whole-line pattern does, with or without a code", () => {
		// The pattern run on every line that holds a space and a `: ` (before the first-space rule).
		const typed = /^((?:[a-z_][\w]*\.)*[A-Z][\w]*)( \[[A-Z][A-Z0-9_]*\])?: (.*)$/;
		const bare = /^((?:[a-z_][\w]*\.)*[A-Z][\w]*)$/;
		const reference = (line: string) => {
			const match = line.includes(" ") && line.includes(": ") ? typed.exec(line) : null;
			if (match) return { type: match[2] ? `${match[1]}${match[2]}` : match[1], message: match[3] };
			const alone = line.includes(" ") ? null : bare.exec(line);
			return alone && !/Warning$/.test(alone[1]) ? { type: alone[1], message: "" } : null;
		};
		const part = fc.constantFrom(
			"ValueError",
			"a.b",
			"x",
			":",
			": ",
			" ",
			"  ",
			"[ERR_X]",
			" [ERR_A1]",
			"[",
			"]",
			"é",
			"_",
			"9",
			"msg",
		);
		fc.assert(
			fc.property(fc.array(part, { maxLength: 8 }), (parts) => {
				const line = parts.join("");
				expect(exceptionOf(line, true)).toEqual(reference(line));
			}),
			{ numRuns: 20_000 },
		);
	});
});
