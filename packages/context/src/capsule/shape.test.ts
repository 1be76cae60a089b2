import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keyOfShape, lineShape, shapeKey } from "./shape.js";

const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs", import.meta.url));

/** Characters every rule of the shape turns on: spaces of each kind, digits, hex letters, `0x`, separators, words. */
const shapeChars = fc.constantFrom(
	..." \t\r\f\v\n\u00a0\u2028_/\\.:-([0x0X".split(""),
	"0",
	"7",
	"a",
	"f",
	"F",
	"g",
	"Z",
	"é",
	"😀",
	"deadbeef1",
	"0xff",
);

describe("lineShape", () => {
	it("gives repeated lines that differ only in numbers, ids and paths the same shape", () => {
		expect(lineShape('  File "/srv/app/a.py", line 12, in run')).toBe(
			lineShape('File "/srv/lib/b.py", line 7,  in run'),
		);
		expect(lineShape("at Object.<anonymous> (test/api.js:12:5)")).toBe("at Object.<anonymous> /P");
		expect(lineShape("object at 0x7f3a2b1c")).toBe(lineShape("object at 0x55d0e1"));
		expect(lineShape("commit 3f9a1c2d7e is ready")).toBe("commit # is ready");
		expect(lineShape("worker[3] took 120ms")).toBe("worker[0] took 0ms");
	});

	it("keeps lines with different words apart", () => {
		expect(lineShape("FAILED test_parse_empty")).not.toBe(lineShape("FAILED test_parse_full"));
		expect(lineShape("deadbeef")).toBe("deadbeef");
	});

	it("gives every line the key of its shape's text (`shapeKey` is `keyOfShape(lineShape(...))`)", () => {
		const key = (line: string) => expect(shapeKey(line)).toBe(keyOfShape(lineShape(line)));
		fc.assert(
			fc.property(fc.array(shapeChars, { maxLength: 80 }), fc.string({ maxLength: 300 }), (chars, text) => {
				key(chars.join(""));
				key(text);
				key(chars.join("").repeat(5));
			}),
			{ numRuns: 3000 },
		);
		let lines = 0;
		for (const name of readdirSync(FIXTURES).filter((n) => /^\d{3}-/.test(n))) {
			for (const line of readFileSync(join(FIXTURES, name, "output.txt"), "utf8").split("\n")) {
				key(line);
				lines++;
			}
		}
		expect(lines).toBeGreaterThan(100_000);
	});

	it("tells the shapes of real outputs apart by their keys", () => {
		const shapes = new Set<string>();
		const keys = new Set<number>();
		for (const name of readdirSync(FIXTURES).filter((n) => /^\d{3}-/.test(n))) {
			for (const line of readFileSync(join(FIXTURES, name, "output.txt"), "utf8").split("\n")) {
				shapes.add(lineShape(line));
				keys.add(shapeKey(line));
			}
		}
		expect(keys.size).toBe(shapes.size);
	});
});
