import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compactFailingIds } from "./failing-ids.js";

/** The rule as a pattern states it: every proper suffix after a separator, in both forms, covers an id. */
function compactByPattern(ids: readonly string[]): string[] {
	const separator = /::|\.|\s›\s|\s>\s|\/|\s/g;
	const unique = [...new Set(ids)];
	const covered = new Set<string>();
	for (const id of unique) {
		for (const form of id.includes("::") ? [id, id.replace(/::/g, ".")] : [id]) {
			for (const match of form.matchAll(separator)) {
				const rest = form.slice(match.index + match[0].length);
				if (rest.length > 0) covered.add(rest);
			}
		}
	}
	return unique.filter((id) => !covered.has(id));
}

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

	it("drops exactly what the separator pattern says, on ids made of separators, look-alikes and odd spaces", () => {
		const part = fc.constantFrom(
			"a",
			"b",
			"ab",
			"test_b[1]",
			":",
			"::",
			":::",
			".",
			"/",
			" ",
			"\t",
			"\u00a0",
			"\u2003",
			"›",
			" › ",
			" > ",
			">",
			" >",
			"> ",
			"\u00a0›\u00a0",
		);
		const id = fc.array(part, { minLength: 1, maxLength: 8 }).map((parts) => parts.join(""));
		fc.assert(
			fc.property(fc.array(id, { minLength: 1, maxLength: 12 }), (ids) => {
				expect(compactFailingIds(ids)).toEqual(compactByPattern(ids));
			}),
			{ numRuns: 3_000 },
		);
	});
});
