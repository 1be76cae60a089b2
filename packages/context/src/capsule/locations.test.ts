import { describe, expect, it } from "vitest";
import { capsuleFor as buildCapsule } from "../../test/capsule-for.js";
import type { Outcome } from "../types.js";
import { locationLines, rankLocations } from "./locations.js";

type Location = Outcome["locations"][number];

function outcome(locations: Location[]): Outcome {
	return {
		runner: null,
		status: "fail",
		counts: null,
		failingIds: [],
		exceptions: [],
		locations,
		summaryLines: [],
		exitCode: 1,
	};
}

const bytesOf = (lines: string[]) => Buffer.byteLength(lines.map((line) => `${line}\n`).join(""));

/** Every `file:line` a listing names, with the stated directory put back. */
function listed(lines: string[]): string[] {
	const base = /under (\S+\/)\):$/.exec(lines[0])?.[1] ?? "";
	return lines.slice(1).flatMap((row) => {
		const match = /^(\S+):(\d+(?:,\d+)*)$/.exec(row);
		return match ? match[2].split(",").map((n) => `${base}${match[1]}:${n}`) : [];
	});
}

/** A mocha-like failure: the test frame, the raising frame, an intermediate frame and runner frames. */
function stack(at: number, test: number): Location[] {
	return [
		{ file: "/home/dev/proj/index.js", line: 200 + test, at },
		{ file: "/home/dev/proj/lib/match.js", line: 40 + test, at: at + 1 },
		{ file: "/home/dev/proj/test/api.js", line: test, at: at + 2 },
		{ file: "/usr/lib/node_modules/mocha/lib/runner.js", line: 600 + test, at: at + 3 },
	];
}

describe("grouped location listing", () => {
	it("keeps absolute paths whole when the output also has relative ones, so no row is misread", () => {
		const locations = [
			{ file: "tests/test_a.py", line: 12, at: 10 },
			{ file: "/home/dev/proj/src/attr/_funcs.py", line: 83, at: 11 },
			{ file: "/home/dev/proj/src/attr/_make.py", line: 164, at: 12 },
		];
		expect(locationLines(outcome(locations), 1000)).toEqual([
			"LOCATIONS (3 in 3 files; each line is path:line,line,...):",
			"tests/test_a.py:12",
			"/home/dev/proj/src/attr/_make.py:164",
			"/home/dev/proj/src/attr/_funcs.py:83",
		]);
	});

	it("keeps a relative location beside an absolute one of the same tail: it may be another package's file", () => {
		// Run from packages/b, `src/index.py` is packages/b's, not the traceback's packages/a file.
		const locations = [
			{ file: "/work/mono/packages/a/src/index.py", line: 10, at: 10 },
			{ file: "src/index.py", line: 10, at: 20 },
		];
		expect(locationLines(outcome(locations), 1000)).toEqual([
			"LOCATIONS (2 in 2 files; each line is path:line,line,...):",
			"/work/mono/packages/a/src/index.py:10",
			"src/index.py:10",
		]);
		expect(locationLines(outcome(locations.slice(1)), 1000)[0]).toBe(
			"LOCATIONS (1 in 1 file; each line is path:line,line,...):",
		);
	});

	it("lists every location when they fit, one file per line with its lines ascending, relative to the project root", () => {
		const locations = [
			...[50, 10, 30].map((line, i) => ({ file: "/home/dev/proj/tests/test_a.py", line, at: 100 * (i + 1) })),
			{ file: "/home/dev/proj/src/a.py", line: 7, at: 400 },
			{ file: "/home/dev/proj/tests/test_a.py", line: 10, at: 500 },
			{ file: "/usr/lib/python3.11/unittest/case.py", line: 600, at: 600 },
		];
		const lines = locationLines(outcome(locations), 1000);
		expect(lines).toEqual([
			"LOCATIONS (5 in 3 files; each line is path:line,line,... under /home/dev/proj/):",
			"tests/test_a.py:10,30,50",
			"src/a.py:7",
			"/usr/lib/python3.11/unittest/case.py:600",
		]);
	});

	it("never exceeds its byte budget, counts what it leaves out, and keeps every location once the budget allows", () => {
		const locations = Array.from({ length: 300 }, (_, i) => ({
			file: `/home/dev/proj/${i % 2 ? "tests/test_b.py" : "src/&lt<b>.py"}`,
			line: 3 * i + 1,
			at: 10 * i,
		}));
		for (const budget of [40, 120, 200, 500, 1000]) {
			const lines = locationLines(outcome(locations), budget);
			if (lines.length === 0) continue;
			expect(bytesOf(lines)).toBeLessThanOrEqual(budget);
			const shown = listed(lines).length;
			expect(shown).toBeLessThan(300);
			expect(lines[lines.length - 1]).toBe(
				`(+${300 - shown} more locations in 2 files: search the archive for a file name)`,
			);
		}
		const all = locationLines(outcome(locations), 4000);
		expect(listed(all)).toHaveLength(300);
		expect(all[all.length - 1]).toMatch(/^tests\/test_b\.py:/);
	});

	it("lists test and raising frames first and library frames last, and drops them in reverse order", () => {
		const locations = [...stack(10, 5), ...stack(20, 9), ...stack(30, 13)];
		const ranks = rankLocations(locations).map(
			(loc) => `${loc.file.replace("/home/dev/proj/", "")}:${loc.line}=${loc.rank}`,
		);
		expect(ranks).toEqual([
			"index.js:205=0",
			"lib/match.js:45=1",
			"test/api.js:5=0",
			"/usr/lib/node_modules/mocha/lib/runner.js:605=2",
			"index.js:209=0",
			"lib/match.js:49=1",
			"test/api.js:9=0",
			"/usr/lib/node_modules/mocha/lib/runner.js:609=2",
			"index.js:213=0",
			"lib/match.js:53=1",
			"test/api.js:13=0",
			"/usr/lib/node_modules/mocha/lib/runner.js:613=2",
		]);
		const full = locationLines(outcome(locations), 2000);
		expect(full.slice(1)).toEqual([
			"index.js:205,209,213",
			"test/api.js:5,9,13",
			"lib/match.js:45,49,53",
			"/usr/lib/node_modules/mocha/lib/runner.js:605,609,613",
		]);
		// A budget that holds only part of the list keeps the decisive frames and leaves out the library.
		const short = locationLines(outcome(locations), bytesOf(full.slice(0, 3)) + 70);
		expect(listed(short)).toEqual([
			"/home/dev/proj/index.js:205",
			"/home/dev/proj/index.js:209",
			"/home/dev/proj/index.js:213",
			"/home/dev/proj/test/api.js:5",
			"/home/dev/proj/test/api.js:9",
			"/home/dev/proj/test/api.js:13",
		]);
		expect(short[short.length - 1]).toBe("(+6 more locations in 2 files: search the archive for a file name)");
	});

	it("treats a run of locations in one file (a linter block) as equally decisive, not as a stack", () => {
		const block = [1, 2, 3, 4].map((i) => ({ file: "lib/dumper.js", line: i * 10, at: i }));
		expect(rankLocations(block).map((loc) => loc.rank)).toEqual([0, 0, 0, 0]);
	});

	it("gives nothing when no location fits", () => {
		const locations = [{ file: "src/a.py", line: 7, at: 1 }];
		expect(locationLines(outcome(locations), 20)).toEqual([]);
		expect(locationLines(outcome([]), 1000)).toEqual([]);
	});
});

describe("locations in a structured capsule", () => {
	const header = { bytes: 200_000, lines: 4000 };
	const capsuleFor = (text: string, failingIds: string[], budget: number, exitCode = 1) =>
		buildCapsule(text, { failingIds, budget, exitCode, header });

	/** An ESLint-like report: `count` problems spread over a few files. */
	function lintReport(count: number): string {
		const out: string[] = [];
		for (let file = 0; file < 4; file++) {
			out.push("", `/home/dev/proj/lib/part${file}.js`);
			for (let i = 0; i < count / 4; i++)
				out.push(`  ${10 + 7 * i}:5  error  Unexpected var, use let or const instead  no-var`);
		}
		out.push("", `✖ ${count} problems (${count} errors, 0 warnings)`);
		return out.join("\n");
	}

	it("lists every location when they fit and still shows evidence lines", () => {
		const capsule = capsuleFor(lintReport(80), [], 6144);
		expect(Buffer.byteLength(capsule.text)).toBeLessThanOrEqual(6144);
		expect(capsule.text).toContain(
			"LOCATIONS (80 in 4 files; each line is path:line,line,... under /home/dev/proj/lib/):",
		);
		const rows = capsule.text.split("\n").filter((row) => /^part\d\.js:[\d,]+$/.test(row));
		expect(rows.flatMap((row) => row.split(":")[1].split(","))).toHaveLength(80);
		expect(capsule.excerptLines.length).toBeGreaterThan(0);
	});

	it("never exceeds the budget because of locations, whatever their number", () => {
		for (const budget of [1536, 3072, 6144]) {
			const capsule = capsuleFor(lintReport(2000), [], budget);
			expect(Buffer.byteLength(capsule.text)).toBeLessThanOrEqual(budget);
			expect(capsule.text).toMatch(/\(\+\d+ more locations in \d+ files: search the archive for a file name\)/);
		}
	});

	it("keeps everything but the failing-id list within the budget when the ids alone overflow it", () => {
		const ids = Array.from({ length: 400 }, (_, i) => `tests/test_mod.py::test_case_number_${i}`);
		const capsule = capsuleFor(lintReport(2000), ids, 6144);
		const idBlock = Buffer.byteLength(["FAILING_TESTS (400, all listed):", ...ids].map((l) => `${l}\n`).join(""));
		expect(Buffer.byteLength(capsule.text)).toBeGreaterThan(6144);
		expect(Buffer.byteLength(capsule.text) - idBlock).toBeLessThanOrEqual(6144);
		expect(capsule.text).toContain("LOCATIONS (2000 in 4 files;");
	});

	it("keeps locations when the ids fit the budget but leave the locations no room beside the evidence reserve", () => {
		// 110 to 150 ids of 40 bytes take 4.4 to 6 KiB: from all but the reserve of a 6 KiB budget to all of it.
		for (let count = 110; count <= 150; count += 5) {
			const ids = Array.from({ length: count }, (_, i) => `tests/test_mod.py::test_case_number_${i}`);
			const capsule = capsuleFor(lintReport(40), ids, 6144);
			expect(capsule.text).toContain(`FAILING_TESTS (${count}, all listed):`);
			expect(capsule.text).toContain("LOCATIONS (40 in 4 files;");
			expect(Buffer.byteLength(capsule.text)).toBeLessThanOrEqual(4 * 6144);
		}
	});

	it("gives locations more of the budget when there is no failure to show (a diff is its list of hunks)", () => {
		const diff: string[] = [];
		for (let file = 0; file < 150; file++) {
			diff.push(`diff --git a/src/module_${file}.py b/src/module_${file}.py`, `--- a/src/module_${file}.py`);
			diff.push(`+++ b/src/module_${file}.py`);
			for (let hunk = 0; hunk < 8; hunk++)
				diff.push(`@@ -${10 + 40 * hunk},3 +${12 + 40 * hunk},4 @@`, " same", "+added");
		}
		const text = diff.join("\n");
		const listed = (capsule: { text: string }) =>
			capsule.text
				.split("\n")
				.filter((row) => /^src\/module_\d+\.py:[\d,]+$/.test(row))
				.join(",")
				.split(",").length;
		const clean = capsuleFor(text, [], 6144, 0);
		const failed = capsuleFor(text, [], 6144, 1);
		expect(Buffer.byteLength(clean.text)).toBeLessThanOrEqual(6144);
		expect(Buffer.byteLength(failed.text)).toBeLessThanOrEqual(6144);
		expect(listed(clean)).toBeGreaterThan(listed(failed));
		expect(failed.excerptLines.length).toBeGreaterThan(0);
	});
});
