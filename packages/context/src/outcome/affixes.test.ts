import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endsWithText, startsWithText } from "./affixes.js";

/** Short texts over a few characters (surrogate halves included), so prefixes and suffixes often match. */
const text = fc
	.array(fc.constantFrom("a", "b", " ", "é", "\ud83d", "\ude00", "😀"), { maxLength: 8 })
	.map((parts) => parts.join(""));
const affix = text.filter((t) => t.length > 0);

describe("startsWithText and endsWithText", () => {
	it("answer exactly as startsWith and endsWith do", () => {
		fc.assert(
			fc.property(text, affix, (line, part) => {
				expect(startsWithText(line, part)).toBe(line.startsWith(part));
				expect(endsWithText(line, part)).toBe(line.endsWith(part));
				expect(startsWithText(part + line, part)).toBe(true);
				expect(endsWithText(line + part, part)).toBe(true);
			}),
			{ numRuns: 5000 },
		);
	});
});
