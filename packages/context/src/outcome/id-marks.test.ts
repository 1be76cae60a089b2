import { describe, expect, it } from "vitest";
import { IdMarkCounter, markAround } from "./id-marks.js";
import { parseOutcome } from "./scanner.js";

describe("failing id marks", () => {
	it("reads the mark before an id, or the word in capitals after it", () => {
		expect(markAround("FAILED tests/a.py::t - assert 1 == 2", "tests/a.py::t")).toBe("FAILED");
		expect(markAround("tests/a.py::t ERROR                [ 10%]", "tests/a.py::t")).toBe("ERROR");
		expect(markAround("✖ parses dates (1.2ms)", "parses dates")).toBe("✖");
		expect(markAround("not ok 12 - parses dates", "parses dates")).toBe("not ok");
		// A section rule is no part of the mark; a mark opening with a word in capitals is that word.
		expect(markAround("_____ ERROR at setup of t_db _____", "t_db")).toBe("ERROR");
	});

	it("reads no mark where a search for it would not find the ids alike", () => {
		// A numbered mark names one failure.
		expect(markAround("1) parses dates", "parses dates")).toBeNull();
		expect(markAround('say "FAILED" t', "t")).toBeNull();
		expect(markAround("tests/a.py::t", "tests/a.py::t")).toBeNull();
		expect(markAround("FAILED other", "tests/a.py::t")).toBeNull();
	});

	it("counts each id once per mark, under every mark it was printed with, and takes a withdrawn id back", () => {
		const counter = new IdMarkCounter();
		counter.note("a FAILED [ 10%]", "a");
		counter.note("FAILED a - boom", "a");
		counter.note("b ERROR [ 20%]", "b");
		counter.note("ERROR b - boom", "b");
		counter.note("c FAILED [ 30%]", "c");
		counter.note("✖ d (1ms)", "d");
		expect(counter.list()).toEqual([
			{ mark: "FAILED", ids: 2 },
			{ mark: "ERROR", ids: 1 },
			{ mark: "✖", ids: 1 },
		]);
		expect(counter.markedIds).toBe(4);
		counter.forget("c");
		expect(counter.list()[0]).toEqual({ mark: "FAILED", ids: 1 });
		expect(counter.markedIds).toBe(3);
	});

	it("are part of the outcome, with the ids printed under none", () => {
		const outcome = parseOutcome(
			[
				"tests/a.py::t1 FAILED [ 50%]",
				"tests/a.py::t2 ERROR [100%]",
				"=== short test summary info ===",
				"FAILED tests/a.py::t1 - assert 1 == 2",
				"ERROR tests/a.py::t2 - RuntimeError: no db",
				"=== 1 failed, 1 error in 0.12s ===",
			].join("\n"),
		);
		expect(outcome.failingIds).toEqual(["tests/a.py::t1", "tests/a.py::t2"]);
		expect(outcome.failingIdMarks).toEqual([
			{ mark: "FAILED", ids: 1 },
			{ mark: "ERROR", ids: 1 },
		]);
		expect(outcome.unmarkedFailingIds).toEqual([]);
		expect(outcome.unmarkedUnrecordedIds).toBe(0);
	});
});
