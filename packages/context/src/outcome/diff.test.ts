import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";

const lines = (...text: string[]) => text.join("\n");

describe("diffs: hunk starts are locations, what a hunk quotes is a file's text", () => {
	it("takes hunk starts of a diff and ignores the quoted content", () => {
		const outcome = parseOutcome(
			lines(
				"diff --git a/src/a.py b/src/a.py",
				"--- a/src/a.py",
				"+++ b/src/a.py",
				"@@ -10,3 +12,4 @@ def f():",
				" context",
				"+ValueError: not an error of this run",
				"-    raise KeyError(x)",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["src/a.py:12"]);
		expect(outcome.exceptions).toEqual([]);
		expect(outcome.status).toBe("unknown");
	});

	it("ends a hunk where its header's line counts say, so output right after a diff is read", () => {
		const outcome = parseOutcome(
			lines(
				"--- a/src/a.py",
				"+++ b/src/a.py",
				"@@ -1,2 +1,2 @@",
				" keep",
				"-old",
				"+new",
				" ValueError: bad input of this run",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["src/a.py:1"]);
		expect(outcome.exceptions).toEqual([{ type: "ValueError", message: "bad input of this run", line: 7 }]);
	});

	it("ends a hunk at a line its side has no count left for, and reads a `diff -u` path without its date", () => {
		const outcome = parseOutcome(
			lines(
				"--- a.txt\t2024-01-01 00:00:00.000000000 +0000",
				"+++ b.txt\t2024-01-02 00:00:00.000000000 +0000",
				"@@ -1 +1,2 @@",
				"-old",
				"+new",
				" ValueError: of this run, after a hunk that claimed one more new line",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["b.txt:1"]);
		expect(outcome.exceptions).toEqual([
			{ type: "ValueError", message: "of this run, after a hunk that claimed one more new line", line: 6 },
		]);
	});

	it("counts a combined diff's hunk (`git show` of a merge) per parent", () => {
		const outcome = parseOutcome(
			lines(
				"diff --cc src/f.py",
				"index 1,2..3",
				"--- a/src/f.py",
				"+++ b/src/f.py",
				"@@@ -4,3 -4,3 +4,3 @@@ def f():",
				"  Traceback (most recent call last):",
				"  KeyError: quoted in a merge",
				"- FAILED tests/x.py::t - quoted",
				" -1 failed in 0.2s",
				"++ValueError: quoted",
				"  TypeError: of this run, after the hunk",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["src/f.py:4"]);
		expect(outcome.exceptions).toEqual([{ type: "TypeError", message: "of this run, after the hunk", line: 11 }]);
		expect(outcome.failingIds).toEqual([]);
		expect(outcome.counts).toBe(null);
	});

	it("keeps a removed `-- comment` and a note after the last line inside the hunk", () => {
		const outcome = parseOutcome(
			lines(
				"--- a/q.sql",
				"+++ b/q.sql",
				"@@ -3,2 +3 @@",
				"--- see src/b.py:12 (a comment)",
				"-select 1;",
				"\\ No newline at end of file",
				"+ src/c.py:40 too",
				"KeyError: 'of this run'",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["q.sql:3"]);
		expect(outcome.exceptions).toEqual([{ type: "KeyError", message: "'of this run'", line: 8 }]);
	});
});
