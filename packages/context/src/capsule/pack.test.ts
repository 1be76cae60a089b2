import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeXmlText, unescapeXmlText, utf8Bytes } from "./escape.js";
import { type ExcerptLine, packExcerpt, renderExcerptLine } from "./pack.js";

/** Parses a packed line back into its label and content (marker removed). */
function parsePacked(line: string): { label: number; content: string; truncated: boolean } {
	const match = /^(\d+): (.*)$/s.exec(line);
	if (!match) throw new Error(`unlabelled line: ${line}`);
	let content = match[2].replace(/ \[x\d+ lines of this shape\]$/, "");
	const marker = / \.\.\.\[\+\d+ bytes\]$/.exec(content);
	if (marker) content = content.slice(0, marker.index);
	return { label: Number(match[1]), content, truncated: marker !== null };
}

const lineText = fc.string({
	unit: fc.constantFrom("a", "&", "<", ">", " ", "é", "😀", "x", "1", ":", "\t"),
	maxLength: 300,
});
const candidates = fc.uniqueArray(
	fc.record({ line: fc.integer({ min: 1, max: 100_000 }), text: lineText, priority: fc.integer({ min: 0, max: 9 }) }),
	{ selector: (c) => c.line, maxLength: 60 },
);

describe("packExcerpt", () => {
	it("never exceeds its budget, never splits a line or an entity, and keeps original line numbers", () => {
		fc.assert(
			fc.property(
				candidates,
				fc.integer({ min: 0, max: 4000 }),
				fc.integer({ min: 8, max: 400 }),
				(lines, budget, maxLineBytes) => {
					const packed = packExcerpt(lines, { budget, maxLineBytes });
					expect(utf8Bytes(packed.text)).toBeLessThanOrEqual(budget);
					expect(packed.bytes).toBe(utf8Bytes(packed.text));
					if (packed.text === "") return;
					expect(packed.text.endsWith("\n")).toBe(true);
					const rendered = packed.text.slice(0, -1).split("\n");
					expect(rendered).toHaveLength(packed.lines.length);
					const byLine = new Map(lines.map((l) => [l.line, l.text]));
					let previous = 0;
					for (const line of rendered) {
						expect(utf8Bytes(line)).toBeLessThanOrEqual(maxLineBytes);
						const { label, content, truncated } = parsePacked(line);
						expect(label).toBeGreaterThan(previous);
						previous = label;
						const original = byLine.get(label);
						expect(original).toBeDefined();
						const plain = unescapeXmlText(content);
						if (truncated) expect(original?.startsWith(plain)).toBe(true);
						else expect(plain).toBe(original);
					}
				},
			),
			{ numRuns: 400 },
		);
	});

	it("takes higher-priority lines first and prints them in original order", () => {
		const lines: ExcerptLine[] = [
			{ line: 10, text: "context line", priority: 5 },
			{ line: 40, text: "AssertionError: boom", priority: 1 },
			{ line: 2, text: "header", priority: 5 },
			{ line: 99, text: "1 failed, 3 passed in 0.1s", priority: 0 },
		];
		const budget = utf8Bytes("40: AssertionError: boom\n99: 1 failed, 3 passed in 0.1s\n");
		const packed = packExcerpt(lines, { budget, maxLineBytes: 200 });
		expect(packed.text).toBe("40: AssertionError: boom\n99: 1 failed, 3 passed in 0.1s\n");
		expect(packed.lines).toEqual([40, 99]);
	});

	it("keeps exact labels for repeated identical lines", () => {
		const lines: ExcerptLine[] = [3, 4, 5].map((line) => ({ line, text: "same text", priority: 1 }));
		expect(packExcerpt(lines, { budget: 1000, maxLineBytes: 100 }).text).toBe(
			"3: same text\n4: same text\n5: same text\n",
		);
	});
});

describe("renderExcerptLine", () => {
	it("truncates a long line with a marker naming the bytes left out", () => {
		const text = "x".repeat(10_000);
		const rendered = renderExcerptLine({ line: 7, text, priority: 0 }, 100);
		expect(rendered).not.toBeNull();
		expect(utf8Bytes(rendered ?? "")).toBeLessThanOrEqual(100);
		expect(rendered).toMatch(/^7: x+ \.\.\.\[\+\d+ bytes\]$/);
		const kept = (rendered ?? "").split(" ")[1].length;
		expect(rendered).toContain(`[+${10_000 - kept} bytes]`);
	});

	it("counts the bytes of a line the selector had already capped", () => {
		const rendered = renderExcerptLine({ line: 1, text: "abc", bytes: 5_000_000, priority: 0 }, 200);
		expect(rendered).toBe("1: abc ...[+4999997 bytes]");
	});

	it("shows ids verbatim, escaping only a literal closing tag of the envelope and control characters", () => {
		expect(renderExcerptLine({ line: 1, text: "src/a.ts > parse > x<y && z ", priority: 0 }, 200)).toBe(
			"1: src/a.ts > parse > x<y && z ",
		);
		expect(escapeXmlText("a</prime_context_output>b")).toBe("a&lt;/prime_context_output>b");
		expect(unescapeXmlText(escapeXmlText("a</prime_context_output>b"))).toBe("a</prime_context_output>b");
		expect(escapeXmlText("test\u0000name\u0007")).toBe("test\\x00name\\x07");
	});

	it("shows how many lines of the same shape a line stands for", () => {
		expect(renderExcerptLine({ line: 12, text: "at foo (a.js:1:2)", priority: 0, repeats: 498 }, 200)).toBe(
			"12: at foo (a.js:1:2) [x498 lines of this shape]",
		);
	});
});
