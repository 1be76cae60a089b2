import { describe, expect, it } from "vitest";
import { lineShape } from "./shape.js";

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
});
