import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseOutcome } from "../outcome/index.js";
import { scanObservation } from "./scan.js";
import { visibleTextSource } from "./source.js";

const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs/", import.meta.url));

/** The outcome of a broker scan, where the line selector keeps the scanner's notes on each line (`LineMemo`). */
async function scanned(text: string, exitCode: number | null) {
	const input = { tool: "bash", text, isError: false, exitCode };
	return (await scanObservation(visibleTextSource(text), input, null)).outcome;
}

describe("the scanner's notes kept with the selector's facts", () => {
	it("give the outcome the scanner finds on its own, on every real output and repeated-line case", async () => {
		const texts = readdirSync(FIXTURES)
			.filter((name) => /^\d{3}-/.test(name))
			.map((name) => readFileSync(`${FIXTURES}${name}/output.txt`, "utf8"));
		// The whole labelled corpus (other cases may join it).
		expect(texts.length).toBeGreaterThanOrEqual(81);
		const header = "________________________ test_parse ________________________";
		const frame = "at main (src/app.js:3:9)";
		texts.push(
			["FAILED (failures=1)", "", "Ran 2 tests in 0.010s", "", "FAILED (failures=1)", "FAILED (failures=1)"].join("\n"),
			["==== test session starts ====", header, header, "==== FAILURES ====", header, "E   ValueError: bad"].join("\n"),
			["5 passed in 0.20s", frame, "  TypeError: boom", frame].join("\n"),
			["E501 Line too long (120 > 88)", "", "E501 Line too long (120 > 88)", "  --> src/app.py:3:89"].join("\n"),
			// A coloured CRLF diff: git highlights an added line's `\r`, followed by a colour reset only.
			[
				"--- a/f.txt",
				"+++ b/f.txt",
				"@@ -1,2 +1,3 @@",
				"\u001b[32m+x\u001b[m\u001b[41m\r\u001b[m",
				" a\r",
				" KeyError: quoted\r",
			].join("\n"),
			// Coloured lines among plain ones in one piece of text (the reader marks only escape-free lines
			// as plain), with the 8-bit CSI too, and an escape past a long line's kept characters.
			[
				"tests/a.py::test_one PASSED",
				"\u001b[31mFAILED\u001b[0m tests/a.py::test_two - \u001b[1mValueError\u001b[0m: bad",
				"tests/a.py::test_three PASSED",
				"\u009b31mFAILED\u009b0m tests/a.py::test_four - KeyError: 'k'",
				`${"x".repeat(5_000)}\u001b[31m`,
				"\u001b[31m= 2 failed, 2 passed in 0.10s =\u001b[0m",
			].join("\n"),
			// More distinct lines than the tables hold, then the first ones again.
			Array.from({ length: 9_000 }, (_, i) => `step ${i % 5_000} at src/m${i % 5_000}.py:${i % 7}`).join("\n"),
		);
		for (const text of texts) {
			for (const exitCode of [0, 1, null]) {
				expect(await scanned(text, exitCode)).toEqual(parseOutcome(text, { tool: "bash", exitCode, isError: false }));
			}
		}
	});
});
