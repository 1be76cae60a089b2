import { describe, expect, it } from "vitest";
import type { CaseMeta } from "../corpus/index.js";
import { countsShown, legible, locationKept, prepareView, retentionOf } from "./retention.js";

const meta = (over: Partial<CaseMeta>): CaseMeta => ({
	tool: "pytest",
	command: "pytest",
	exit_code: 1,
	failing_ids: [],
	error_types: [],
	locations: [],
	counts: null,
	outcome: "fail",
	...over,
});

describe("legible view", () => {
	it("drops ANSI escapes, including ones whose ESC a capsule replaced, and decodes XML entities", () => {
		expect(legible("\u001b[31mFAILED\u001b[0m a &lt;b&gt; &amp; \uFFFD[1mc")).toBe("FAILED a <b> & c");
	});
});

describe("location shapes", () => {
	const kept = (view: string, location: string) => locationKept(prepareView(view), location);

	it("matches path:line exactly, not a longer line number", () => {
		expect(kept("src/a.py:12: in f", "src/a.py:12")).toBe(true);
		expect(kept("src/a.py:123: in f", "src/a.py:12")).toBe(false);
	});

	it("matches a Python traceback frame and tsc's path(line,col)", () => {
		expect(kept('  File "/home/x/src/a.py", line 7, in f', "src/a.py:7")).toBe(true);
		expect(kept("src/index.ts(424,5): error TS2322", "src/index.ts:424")).toBe(true);
	});

	it("matches an ESLint stylish block and a git diff hunk of the file", () => {
		expect(kept("\nbenchmark/b.js\n   7:1  error  Unexpected var  no-var\n", "benchmark/b.js:7")).toBe(true);
		expect(kept("\nbenchmark/b.js\n   8:1  error  x  no-var\n\nother.js\n  7:1 error", "benchmark/b.js:7")).toBe(false);
		const diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -10,3 +12,4 @@ def f():\n";
		expect(kept(diff, "x.py:12")).toBe(true);
		expect(kept(diff, "x.py:11")).toBe(false);
	});

	it("matches a listing grouped under a stated directory", () => {
		const listing = "LOCATIONS (3, under /home/dev/p/test/):\napi.js:41 api.js:58\nbash.js:9\nFAILING_TESTS (2):";
		expect(kept(listing, "test/api.js:58")).toBe(true);
		expect(kept(listing, "test/bash.js:9")).toBe(true);
		expect(kept(listing, "test/api.js:5")).toBe(false);
		expect(kept(listing, "lib/api.js:41")).toBe(false);
	});

	it("matches a file's comma list of lines only when the list holds that exact line", () => {
		const listing =
			"LOCATIONS (5 in 2 files; each line is path:line,line,... under /home/dev/p/):\ntest/api.js:41,58,1200\nindex.js:9\n";
		expect(kept(listing, "test/api.js:58")).toBe(true);
		expect(kept(listing, "test/api.js:1200")).toBe(true);
		expect(kept(listing, "index.js:9")).toBe(true);
		expect(kept(listing, "test/api.js:4")).toBe(false);
		expect(kept(listing, "test/api.js:120")).toBe(false);
		expect(kept(listing, "test/bash.js:58")).toBe(false);
		// Without a stated directory the paths count as written.
		expect(kept("src/a.py:3,12,40\n", "src/a.py:12")).toBe(true);
		expect(kept("src/a.py:3,12,40\n", "src/b.py:12")).toBe(false);
		// A comma list inside prose is not a listing row.
		expect(kept("see src/a.py:3,12,40 for details\n", "src/a.py:12")).toBe(false);
	});
});

describe("false greens", () => {
	it("flags a view of a failed run that shows nothing of the failure, and notes a pass-shaped one", () => {
		const labels = meta({ failing_ids: ["tests/t.py::test_a"] });
		expect(retentionOf("collected 10 items\n\ntests/t.py ....", labels).falseGreen).toBe(true);
		const passShaped = retentionOf("=== 9 passed in 0.1s ===", labels);
		expect(passShaped.falseGreen).toBe(true);
		expect(passShaped.falseGreenPassShaped).toBe(true);
		expect(retentionOf("FAILED tests/t.py::test_a - AssertionError", labels).falseGreen).toBe(false);
	});

	it("does not judge passing runs", () => {
		expect(retentionOf("ok", meta({ outcome: "pass", exit_code: 0 })).falseGreen).toBeNull();
	});
});

describe("counts shown", () => {
	it("needs the failed and passed numbers on result-shaped lines", () => {
		const counts = { passed: 8, failed: 1, skipped: 0, errors: 0 };
		expect(countsShown(prepareView("=== 1 failed, 8 passed in 0.10s ==="), counts)).toBe(true);
		expect(countsShown(prepareView("=== 1 failed ==="), counts)).toBe(false);
		expect(countsShown(prepareView("Ran 9 tests\nFAILED (failures=1)"), counts)).toBe(true);
	});
});
