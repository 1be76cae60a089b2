import { describe, expect, it } from "vitest";
import { compactFailingIds } from "./failing-ids.js";

describe("compactFailingIds", () => {
	it("drops short aliases of pytest node ids and keeps the node ids in order", () => {
		expect(
			compactFailingIds([
				"tests/test_a.py::TestA::test_b[1]",
				"tests/test_a.py::test_free",
				"TestA.test_b[1]",
				"test_free",
				"TestOther.test_c",
			]),
		).toEqual(["tests/test_a.py::TestA::test_b[1]", "tests/test_a.py::test_free", "TestOther.test_c"]);
	});

	it("drops a leaf title that a longer listed id ends with, and exact duplicates", () => {
		expect(compactFailingIds(["src/a.test.ts > parse > handles x", "handles x", "handles x"])).toEqual([
			"src/a.test.ts > parse > handles x",
		]);
	});

	it("keeps ids that only share a prefix or a word inside", () => {
		expect(compactFailingIds(["test_parse_long", "parse", "test_parse"])).toEqual([
			"test_parse_long",
			"parse",
			"test_parse",
		]);
	});
});
