import { describe, expect, it } from "vitest";
import { fileOfId } from "./failing-block.js";

describe("fileOfId", () => {
	it("names the file of ids of every runner, folders with spaces included", () => {
		expect(fileOfId("tests/test_a.py::TestA::test_b[x y]")).toBe("tests/test_a.py");
		expect(fileOfId("my tests/test_s p.py::test_q[a b]")).toBe("my tests/test_s p.py");
		expect(fileOfId("src/a.test.ts > suite > works")).toBe("src/a.test.ts");
		expect(fileOfId("tests/test_ünï.py::test_p[0]")).toBe("tests/test_ünï.py");
	});

	it("names no file for a title that only mentions one", () => {
		expect(fileOfId("should parse the file config.json correctly")).toBe(null);
		expect(fileOfId("parser reads a.b::c")).toBe(null);
	});
});
