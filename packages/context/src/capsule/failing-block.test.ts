import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { capsuleFor } from "../../test/capsule-for.js";
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

describe("a capsule of more failing tests than a scan records", () => {
	it("counts pytest's 2,600 failures as 2,600, each test named by its short name and its whole id", () => {
		// A real pytest 9 run (`-q --tb=short`): 5,200 names, past the 5,000 a scan records.
		const output = gunzipSync(
			readFileSync(fileURLToPath(new URL("../../test/fixtures/pytest-2600-failed-q.txt.gz", import.meta.url))),
		).toString("utf8");
		const text = capsuleFor(output).text;
		expect(text).toMatch(/\nFAILING_TESTS \(2600; \d+ listed here, \d+ more below\):\n/);
		expect(text).toContain('\nSearch the rest: prime_context action=search id=obs_000001 query="FAILED"\n');
		expect(text).not.toContain(REST_BY_FILE);
	});
});
