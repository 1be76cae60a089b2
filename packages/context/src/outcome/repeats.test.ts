import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";

const lines = (...text: string[]) => text.join("\n");

describe("a repeated line means what it means where it comes again", () => {
	it("reads unittest's verdict once the runner is confirmed, though the same line meant nothing before", () => {
		const outcome = parseOutcome(
			lines("FAILED (failures=1)", "", "Ran 2 tests in 0.010s", "", "FAILED (failures=1)", "FAILED (failures=1)"),
		);
		expect(outcome.runner).toBe("unittest");
		expect(outcome.counts).toEqual({ total: 2, failed: 1, passed: 1 });
		expect(outcome.summaryLines).toEqual([3, 5, 6]);
		expect(outcome.status).toBe("fail");
	});

	it("names a failing test by a pytest header inside FAILURES, though the same header was prose before", () => {
		const header = "________________________ test_parse ________________________";
		const outcome = parseOutcome(
			lines(
				"======== test session starts ========",
				header,
				header,
				"=========== FAILURES ===========",
				header,
				"E   ValueError: bad",
			),
		);
		expect(outcome.failingIds).toEqual(["test_parse"]);
	});

	it("reads the frames of every traceback, however often the same lines repeat", () => {
		const traceback = [
			"Traceback (most recent call last):",
			'  File "app/run.py", line 9, in main',
			"    go()",
			"KeyError: 'x'",
		];
		const outcome = parseOutcome(lines(...traceback, "", ...traceback, "", "RuntimeError: late"), { exitCode: 1 });
		expect(outcome.exceptions.map((e) => `${e.type}@${e.line}`)).toEqual(["KeyError@4", "RuntimeError@11"]);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["app/run.py:9"]);
	});

	it("counts a stack frame after an exception as a crash, though the same frame line came before without one", () => {
		const frame = "at main (src/app.js:3:9)";
		const outcome = parseOutcome(lines("5 passed in 0.20s", frame, "  TypeError: boom", frame));
		expect(outcome.exceptions).toEqual([{ type: "TypeError", message: "boom", line: 3 }]);
		expect(outcome.status).toBe("fail");
		expect(parseOutcome(lines("5 passed in 0.20s", frame, "  TypeError: boom", "done")).status).toBe("unknown");
	});

	it("reads a ruff code's location line every time, though the code line itself reports nothing", () => {
		const code = "E501 Line too long (120 > 88)";
		const outcome = parseOutcome(lines(code, "", code, "  --> src/app.py:3:89"));
		expect(outcome.exceptions).toEqual([{ type: "E501", message: "Line too long (120 > 88)", line: 3 }]);
	});

	it("takes an error line after the last clean summary as a crash, though the same line came before it", () => {
		const outcome = parseOutcome(
			lines("5 passed in 0.20s", "error: disk full", "6 passed in 0.20s", "error: disk full"),
		);
		expect(outcome.status).toBe("fail");
		expect(parseOutcome(lines("5 passed in 0.20s", "error: disk full", "6 passed in 0.20s")).status).toBe("unknown");
	});
});
