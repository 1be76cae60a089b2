import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitLines } from "./align.js";
import { sameFailureDetail } from "./detail.js";
import { lineDelta, lineDeltaText } from "./line-delta.js";
import { sectionDelta, sectionDeltaText } from "./sections.js";

const doc = (n: number, tag = "") =>
	Array.from({ length: n }, (_, i) => `line ${i + 1} of the document${tag}`).join("\n");

describe("lineDelta", () => {
	it("shows only the changed section with a little context", () => {
		const before = `${doc(200)}\n`;
		const after = before.replace("line 100 of the document", "line 100 was edited");
		const delta = lineDelta(before, after);
		expect(delta).not.toBeNull();
		const text = lineDeltaText(delta ?? ({} as never));
		expect(text).toEqual([
			"@@ -98,5 +98,5 @@",
			" line 98 of the document",
			" line 99 of the document",
			"-line 100 of the document",
			"+line 100 was edited",
			" line 101 of the document",
			" line 102 of the document",
		]);
		expect(delta?.addedLines).toBe(1);
		expect(delta?.removedLines).toBe(1);
	});

	it("is null for identical texts and for texts too different to align cheaply", () => {
		expect(lineDelta(doc(50), doc(50))).toBeNull();
		expect(lineDelta(doc(500, "a"), doc(500, "b"), { maxEdit: 100 })).toBeNull();
	});

	it("never drops novel output: every line of the new text is in the delta or unchanged", () => {
		const words = fc.constantFrom("alpha", "beta", "gamma", "delta", "", "epsilon");
		fc.assert(
			fc.property(fc.array(words, { maxLength: 60 }), fc.array(words, { maxLength: 60 }), (a, b) => {
				const before = a.join("\n");
				const after = b.join("\n");
				const delta = lineDelta(before, after, { maxEdit: 1000 });
				if (delta === null) {
					expect(splitLines(before)).toEqual(splitLines(after));
					return;
				}
				// Rebuild the new text from the old one and the hunks: it must equal the new text exactly.
				const old = splitLines(before);
				const rebuilt: string[] = [];
				let cursor = 0;
				for (const hunk of delta.hunks) {
					while (cursor < hunk.beforeStart - 1) rebuilt.push(old[cursor++]);
					for (const l of hunk.lines) {
						if (l.op === " ") {
							rebuilt.push(old[cursor++]);
						} else if (l.op === "-") cursor++;
						else rebuilt.push(l.text);
					}
				}
				while (cursor < old.length) rebuilt.push(old[cursor++]);
				expect(rebuilt).toEqual(splitLines(after));
			}),
			{ numRuns: 300 },
		);
	});
});

describe("sectionDelta", () => {
	const block = (name: string, n: number) =>
		Array.from({ length: n }, (_, i) => `${name} entry ${i} ${"=".repeat(30)}`);

	it("replaces exact earlier sections of at least 512 bytes with markers and keeps the rest", () => {
		const earlier = block("alpha", 40);
		const after = [...block("alpha", 40), "NEW: something happened", ...block("omega", 2)];
		const delta = sectionDelta(after, [{ id: "obs_000001", lines: earlier }]);
		expect(delta).not.toBeNull();
		const text = sectionDeltaText(delta ?? ({} as never));
		expect(text[0]).toMatch(/^\[lines 1-40 unchanged: identical to obs_000001 lines 1-40 \(\d+ bytes\)\]$/);
		expect(text.slice(1)).toEqual([
			"41: NEW: something happened",
			...block("omega", 2).map((l, i) => `${42 + i}: ${l}`),
		]);
	});

	it("leaves runs shorter than 512 bytes as they are", () => {
		const earlier = block("alpha", 5);
		expect(sectionDelta([...earlier, "new"], [{ id: "obs_000001", lines: earlier }])).toBeNull();
	});

	it("combines sections from several earlier observations", () => {
		const a = block("alpha", 30);
		const b = block("beta", 30);
		const after = [...b, "between", ...a];
		const delta = sectionDelta(after, [
			{ id: "obs_000001", lines: a },
			{ id: "obs_000002", lines: b },
		]);
		const text = sectionDeltaText(delta ?? ({} as never));
		expect(text).toHaveLength(3);
		expect(text[0]).toContain("identical to obs_000002 lines 1-30");
		expect(text[1]).toBe("31: between");
		expect(text[2]).toContain("identical to obs_000001 lines 1-30");
	});

	it("never drops novel output: every line not covered by a marker is shown with its number", () => {
		const pool = [...block("alpha", 20), ...block("beta", 20), "x", "y", "z"];
		fc.assert(
			fc.property(
				fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 80 }),
				fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 80 }),
				(ea, ca) => {
					const earlier = ea.map((i) => pool[i]);
					const after = ca.map((i) => pool[i]);
					const delta = sectionDelta(after, [{ id: "obs_000001", lines: earlier }]);
					if (!delta) return;
					let covered = 0;
					for (const part of delta.parts) {
						if (part.kind === "novel") {
							for (const [i, l] of part.lines.entries()) expect(l).toBe(after[part.start - 1 + i]);
							covered += part.lines.length;
						} else {
							expect(part.bytes).toBeGreaterThanOrEqual(512);
							for (let i = 0; i < part.count; i++)
								expect(after[part.start - 1 + i]).toBe(earlier[part.fromStart - 1 + i]);
							covered += part.count;
						}
					}
					expect(covered).toBe(after.length);
				},
			),
			{ numRuns: 300 },
		);
	});
});

describe("sameFailureDetail", () => {
	const run = (header: string, detail: string, seconds: string) =>
		`${header}\ncollected 3 items\nFAILED tests/test_a.py::test_x - assert 1 == 2\n    ${detail}\n1 failed, 2 passed in ${seconds}s\n`;

	it("compares every line from the first failure on, as shown, durations aside", () => {
		expect(sameFailureDetail(run("rootdir: /a", "left: 1", "0.1"), run("rootdir: /b", "left: 1", "2.5"))).toBe(true);
		expect(sameFailureDetail(run("rootdir: /a", "left: 1", "0.1"), run("rootdir: /a", "left: 3", "0.1"))).toBe(false);
		expect(sameFailureDetail(run("x", "left: 1", "0.1"), run("x", "\u001b[31mleft: 1\u001b[0m", "0.1"))).toBe(true);
		expect(sameFailureDetail(run("x", "left: 1", "0.1"), `${run("x", "left: 1", "0.1")}one more line\n`)).toBe(false);
	});

	it("masks a long run's clock time and rspec's seconds", () => {
		const tail = (time: string) => `FAILED tests/test_a.py::test_x - assert 1 == 2\n${time}\n`;
		expect(sameFailureDetail(tail("1 failed in 65.32s (0:01:05)"), tail("1 failed in 66.01s (0:01:06)"))).toBe(true);
		expect(sameFailureDetail(tail("Finished in 0.01234 seconds"), tail("Finished in 0.02 seconds"))).toBe(true);
	});

	it("agrees on runs with no failure, exception, error or location line", () => {
		expect(sameFailureDetail("3 passed in 0.1s\n", "header\n3 passed in 0.2s\n")).toBe(true);
		expect(sameFailureDetail("3 passed\n", "ValueError: boom\n")).toBe(false);
	});
});
