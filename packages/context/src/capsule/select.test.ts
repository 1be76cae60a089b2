import { describe, expect, it } from "vitest";
import { classifyLine, type LineKind } from "../outcome/index.js";
import { DEFAULT_SELECTOR_LIMITS, LineSelector, type Selection } from "./select.js";

function select(lines: string[], limits = DEFAULT_SELECTOR_LIMITS): Selection {
	const selector = new LineSelector(limits);
	lines.forEach((line, i) => {
		selector.line(line, i + 1, Buffer.byteLength(line));
	});
	return selector.finish();
}

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `step ${i + 1} of the build`);

describe("LineSelector", () => {
	it("keeps the first and last lines in order with their own line numbers, however many there are", () => {
		for (const count of [1, 29, 30, 31, 59, 60, 61, 1_000, 12_345]) {
			const selection = select(numbered(count));
			const tailFrom = Math.max(1, count - 29);
			expect(selection.tail.map((k) => k.line)).toEqual(
				Array.from({ length: count - tailFrom + 1 }, (_, i) => tailFrom + i),
			);
			expect(selection.tail.every((k) => k.text === `step ${k.line} of the build`)).toBe(true);
			expect(selection.head.map((k) => k.line)).toEqual(Array.from({ length: Math.min(30, count) }, (_, i) => i + 1));
			expect(selection.lines).toBe(count);
		}
	});

	it("keeps one line per decisive shape, counting the lines it stands for, even past thousands of repeats", () => {
		const lines = [...numbered(40)];
		for (let i = 0; i < 5_000; i++) lines.push(`error: disk 7 full on /var/tmp/${i % 3}`, `worker ${i} idle`);
		const selection = select(lines);
		const errors = selection.decisive.filter((k) => k.kind === "error");
		expect(errors).toHaveLength(1);
		expect(errors[0]).toMatchObject({ line: 41, text: "error: disk 7 full on /var/tmp/0", repeats: 5_000 });
		expect(selection.kinds.error).toBe(5_000);
	});

	it("counts every line's kind exactly, repeated or not, beyond the lines it remembers", () => {
		const lines: string[] = [];
		for (let i = 0; i < 6_000; i++) lines.push(`case ${i}`, "", "FAILED tests/test_a.py::test_x - assert 1", "    ");
		lines.push("= 1 failed, 5999 passed in 2.00s =");
		const expected: Partial<Record<LineKind, number>> = {};
		for (const line of lines) expected[classifyLine(line)] = (expected[classifyLine(line)] ?? 0) + 1;
		const selection = select(lines);
		expect(Object.fromEntries(Object.entries(selection.kinds).filter(([, n]) => n > 0))).toEqual(expected);
		expect(selection.nonBlank).toBe(12_001);
	});

	it("reads the lines a diff hunk quotes as plain text, and the lines after the hunk as output again", () => {
		const quoted = [" ValueError: quoted", " FAILED tests/test_a.py::test_x - assert 1", " error: quoted"];
		const selection = select([
			"diff --git a/src/a.py b/src/a.py",
			"--- a/src/a.py",
			"+++ b/src/a.py",
			"@@ -1,3 +1,3 @@",
			...quoted,
			"",
			"ValueError: bad",
		]);
		expect(selection.kinds.exception).toBe(1);
		expect(selection.kinds.failure).toBe(0);
		expect(selection.kinds.error).toBe(0);
		expect(selection.kinds.blank).toBe(1);
		expect(selection.decisive.map((k) => [k.line, k.text])).toEqual([[9, "ValueError: bad"]]);
		expect(selection.head.slice(4, 7).map((k) => k.kind)).toEqual(["plain", "plain", "plain"]);
		expect(quoted.map((line) => classifyLine(line))).toEqual(["exception", "failure", "error"]);
	});

	it("reads a hunk header as plain text: what follows its `@@` is a line of the file", () => {
		const header = "@@ -3,3 +3,3 @@ src/m.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.";
		const selection = select(["--- a/build.log", "+++ b/build.log", header, " a", "-b", "+c", " d"]);
		expect(selection.kinds.error).toBe(0);
		expect(selection.decisive).toEqual([]);
		expect(selection.head.map((k) => k.kind)).toEqual(["plain", "plain", "plain", "plain", "plain", "plain", "plain"]);
		expect(classifyLine(header)).toBe("error");
	});

	it("keeps the lines around a failure as context, including one seen only in passing", () => {
		const lines = [...numbered(50), "collecting the fixture", "FAILED tests/test_b.py::test_y - boom", "after it"];
		const selection = select(lines);
		expect(selection.context.map((k) => [k.line, k.text])).toEqual([
			[51, "collecting the fixture"],
			[53, "after it"],
		]);
		expect(selection.context[0].bytes).toBe(Buffer.byteLength("collecting the fixture"));
	});

	it("shows kept lines without ANSI escapes and counts only the bytes shown", () => {
		const raw = "\u001b[31merror: red alert\u001b[0m\r";
		const selection = select([...numbered(40), raw]);
		const kept = selection.decisive.find((k) => k.kind === "error");
		expect(kept).toMatchObject({ text: "error: red alert", raw, bytes: Buffer.byteLength("error: red alert") });
		expect(selection.tail.at(-1)).toMatchObject({ text: "error: red alert", line: 41 });
	});
});
