import { describe, expect, it } from "vitest";
import type { Outcome } from "../types.js";
import { REST_BY_FILE, restSearchHints } from "./build.js";
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

describe("restSearchHints", () => {
	const outcome = (marks: [string, number][], unmarked: string[] = []): Outcome => ({
		runner: null,
		status: "fail",
		counts: null,
		failingIds: ["tests/t_a.py::a", "tests/t_b.py::b", "tap case 1", "spec case 1", ...unmarked],
		failingIdMarks: marks.map(([mark, ids]) => ({ mark, ids })),
		unmarkedFailingIds: unmarked,
		unmarkedUnrecordedIds: 0,
		exceptions: [],
		locations: [],
		summaryLines: [],
		exitCode: 1,
	});
	const queries = (hints: string[]) => hints.map((hint) => /query="(.*)"$/.exec(hint)?.[1] ?? hint);

	it("searches every mark the ids were printed under, most used first, and no more", () => {
		const marks: [string, number][] = [
			["FAILED", 1200],
			["ERROR", 900],
			["not ok", 600],
			["✖", 300],
		];
		expect(queries(restSearchHints("obs_000001", outcome(marks)))).toEqual(["FAILED", "ERROR", "not ok", "✖"]);
	});

	it("leaves a mark holding another to the other's search", () => {
		const marks: [string, number][] = [
			["✖ FAIL", 5],
			["✖", 3],
		];
		expect(queries(restSearchHints("obs_000001", outcome(marks)))).toEqual(["✖"]);
	});

	it("adds the by-file note only when a listed id is under none of the searched marks", () => {
		const marked: [string, number][] = [["FAILED", 4]];
		// `plain name` is listed and was printed under no mark.
		expect(restSearchHints("obs_000001", outcome(marked, ["plain name"]))).toContain(REST_BY_FILE);
		// A short name that a listed whole id stands for (`a` of `tests/t_a.py::a`) is found with it.
		expect(restSearchHints("obs_000001", outcome(marked, ["a"]))).not.toContain(REST_BY_FILE);
		expect(restSearchHints("obs_000001", { ...outcome(marked), unmarkedUnrecordedIds: 1 })).toContain(REST_BY_FILE);
	});
});
