import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";
import { LISTED_SUITES } from "./suites.js";

/** Real outputs of the labelled corpus, in the repository's `fixtures/`. */
const FIXTURES = fileURLToPath(new URL("../../../../fixtures/outputs", import.meta.url));
const fixture = (name: string) => readFileSync(join(FIXTURES, name, "output.txt"), "utf8");

describe("several suites in one output", () => {
	it("reads each workspace of `npm test --workspaces` as a suite and sums their counts", () => {
		// vitest passes, jest fails two tests, then another jest workspace passes.
		const output = fixture("081-npm-test-workspaces-vitest-jest");
		for (const exitCode of [1, undefined]) {
			const outcome = parseOutcome(output, { exitCode });
			expect(outcome.status).toBe("fail");
			expect(outcome.counts).toEqual({ failed: 2, passed: 7, total: 9 });
			expect(outcome.suites).toEqual([
				{ runner: "vitest", counts: { passed: 3, total: 3 }, line: 11, status: "pass" },
				{ runner: "jest", counts: { failed: 2, passed: 2, total: 4 }, line: 68, status: "fail" },
				{ runner: "jest", counts: { passed: 2, total: 2 }, line: 90, status: "pass" },
			]);
			expect(outcome.unlistedSuites).toBeUndefined();
		}
	});

	it("fails a run whose first runner failed though the last one passed and the command exited 0", () => {
		const outcome = parseOutcome(fixture("082-pytest-then-node-test-spec"), { exitCode: 0 });
		expect(outcome.status).toBe("fail");
		expect(outcome.counts).toEqual({ failed: 2, passed: 5, total: 7 });
		expect(outcome.suites?.map((suite) => [suite.runner, suite.status, suite.line])).toEqual([
			["pytest", "fail", 36],
			["node-test", "pass", 43],
		]);
	});

	it("lists the first suites and the last, and counts and sums the ones between", () => {
		// A concatenation of logs: the same pytest run (2 failed, 2 passed) and node run (3 passed), 60 times.
		const log = fixture("082-pytest-then-node-test-spec");
		const outcome = parseOutcome(log.repeat(60));
		expect(outcome.status).toBe("fail");
		expect(outcome.counts).toEqual({ failed: 120, passed: 300, total: 420 });
		expect(outcome.suites).toHaveLength(LISTED_SUITES);
		// Suites 100 to 119 are between the first 99 and the last; every other one of them is pytest's.
		expect(outcome.unlistedSuites).toEqual({ suites: 20, failed: 10 });
		expect(outcome.suites?.[LISTED_SUITES - 1]).toMatchObject({ runner: "node-test", status: "pass" });
	});

	it("reads pytest summaries quoted in a failure's report (pytester's inner runs) as no suite", () => {
		// Four inner runs print their summaries inside the outer run's failures; the outer run's summary
		// is `2 failed, 1 passed`.
		const outcome = parseOutcome(fixture("085-pytest-pytester-inner-runs"), { exitCode: 1 });
		expect(outcome.counts).toEqual({ failed: 2, passed: 1 });
		expect(outcome.suites).toBeUndefined();
		expect(outcome.summaryLines).toEqual([35, 45, 84, 104, 109]);
	});

	it("reads two pytest -q runs put together as two suites, each opened by its progress line", () => {
		const run = (progress: string, summary: string) => [progress, "", summary].join("\n");
		const outcome = parseOutcome(
			[
				run(
					"..F.                                                                     [100%]",
					"1 failed, 3 passed in 0.05s",
				),
				run("..                                                                       [100%]", "2 passed in 0.01s"),
			].join("\n"),
		);
		expect(outcome.counts).toEqual({ failed: 1, passed: 5, total: 6 });
		expect(outcome.suites?.map((suite) => suite.status)).toEqual(["fail", "pass"]);
	});

	it("keeps one suite for one run: unittest's verdict refines the tally its `Ran` line opened", () => {
		const outcome = parseOutcome(["Ran 2 tests in 0.010s", "", "FAILED (failures=1)"].join("\n"));
		expect(outcome.counts).toEqual({ total: 2, failed: 1, passed: 1 });
		expect(outcome.suites).toBeUndefined();
	});
});

describe("node's dot reporter", () => {
	it("counts the tests listed under `Failed tests:`, not the suites that failed through them", () => {
		const outcome = parseOutcome(fixture("083-node-test-dot-reporter"));
		expect(outcome.counts).toEqual({ failed: 3 });
		expect(outcome.failingIds).toEqual(["subtracts", "multiplies", "top level fails"]);
		expect(outcome.status).toBe("fail");
	});

	it("counts no failure for a failing todo test, the only one listed", () => {
		// node 20.20.2, `node --test --test-reporter=dot` over a passing test and a failing todo test: exit 0.
		const output = [
			".X",
			"",
			"Failed tests:",
			"",
			"✖ not yet (2.175633ms) # later",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"  ",
			"  1 !== 2",
			"  ",
			"      at TestContext.<anonymous> (file:///tmp/sm/nd/todo.test.mjs:4:53)",
			"",
		].join("\n");
		const outcome = parseOutcome(output, { exitCode: 0 });
		expect(outcome.counts).toBeNull();
		expect(outcome.failingIds).toEqual([]);
		expect(outcome.status).not.toBe("fail");
	});
});

/** Real pytest 9 runs of 2,600 failing tests (`--tb=short`, 40 columns), gzipped: each failure is printed by its short name and its whole id. */
const pastCap = (name: string) =>
	gunzipSync(readFileSync(fileURLToPath(new URL(`../../test/fixtures/${name}`, import.meta.url)))).toString("utf8");

describe("past the recorded failing ids", () => {
	it("counts 2,600 failures once, whether the short names or the whole ids come first", () => {
		// `-q`: the short names over the tracebacks (`____ test_value[0] ____`), then the `FAILED` lines;
		// `-v`: the whole ids on the progress lines first. 5,200 names, past the 5,000 recorded.
		for (const name of ["pytest-2600-failed-q.txt.gz", "pytest-2600-failed-v.txt.gz"]) {
			const output = pastCap(name);
			expect(output).toContain("2600 failed in ");
			const outcome = parseOutcome(output, { exitCode: 1 });
			expect(outcome.counts).toEqual({ failed: 2600 });
			expect(outcome.unrecordedFailingIds).toBe(0);
			const whole = outcome.failingIds.filter((id) => id.startsWith("test_many.py::test_value["));
			expect(new Set(whole).size).toBe(2600);
		}
	});
});
