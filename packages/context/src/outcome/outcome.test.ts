import { describe, expect, it } from "vitest";
import { createOutcomeScanner, outcomeSignature, parseOutcome, stripAnsi } from "./index.js";

const lines = (...text: string[]) => text.join("\n");

describe("counted outcomes count only on result-shaped lines", () => {
	it("reads a pytest summary between rules", () => {
		const outcome = parseOutcome("==== 1 failed, 8 passed in 0.10s ====");
		expect(outcome.counts).toEqual({ failed: 1, passed: 8 });
		expect(outcome.status).toBe("fail");
		expect(outcome.summaryLines).toEqual([1]);
	});

	it("reads a line that is just the counts", () => {
		const outcome = parseOutcome(lines("....", "9 passed in 0.10s"));
		expect(outcome.counts).toEqual({ passed: 9 });
		expect(outcome.status).toBe("pass");
	});

	it("keeps counts inside requirement prose as ordinary content", () => {
		const prose = lines(
			"## Requirements",
			"- Return 0 succeeded, 1 failed/cancelled when the batch is partial.",
			"The report says 1 failed, 8 passed in 0.10s for the sample run.",
		);
		const outcome = parseOutcome(prose);
		expect(outcome.counts).toBeNull();
		expect(outcome.summaryLines).toEqual([]);
		expect(outcome.status).toBe("unknown");
	});

	it("reads counts through ANSI colour codes", () => {
		const outcome = parseOutcome("\u001b[31m\u001b[1m==== 2 failed\u001b[0m, \u001b[32m3 passed\u001b[0m in 1.2s ====");
		expect(outcome.counts).toEqual({ failed: 2, passed: 3 });
		expect(outcome.runner).toBe("pytest");
	});
});

describe("exceptions come from diagnostic lines, not from code naming a class", () => {
	it("takes `Type: message`, pytest `E` lines, Node codes, panics and bare types", () => {
		const outcome = parseOutcome(
			lines(
				"ValueError: bad",
				"E   AssertionError: x",
				"TypeError [ERR_INVALID_ARG_TYPE]: The argument must be a string",
				"thread 'main' panicked at src/main.rs:3:5:",
				"KeyboardInterrupt",
			),
		);
		expect(outcome.exceptions.map((e) => e.type)).toEqual([
			"ValueError",
			"AssertionError",
			"TypeError [ERR_INVALID_ARG_TYPE]",
			"panic",
			"KeyboardInterrupt",
		]);
		expect(outcome.exceptions[0]).toEqual({ type: "ValueError", message: "bad", line: 1 });
	});

	it("ignores source code that merely names exception classes", () => {
		const code = lines(
			"try:",
			"    run()",
			"except ValueError:",
			"    raise ValueError(f'bad {x}')",
			"return Result(errors=errors)",
			"self.assertRaises(KeyError)",
			"expect(fn).toThrow(TypeError)",
			"with pytest.raises(ValueError):",
			"class ParseError(Exception):",
		);
		const outcome = parseOutcome(code);
		expect(outcome.exceptions).toEqual([]);
		expect(outcome.status).toBe("unknown");
	});
});

describe("status", () => {
	it("is fail with a non-zero exit hint even when the text looks clean", () => {
		expect(parseOutcome("9 passed in 0.1s", { exitCode: 1 }).status).toBe("fail");
	});

	it("is fail when the host reports a tool error", () => {
		expect(parseOutcome("9 passed in 0.1s", { isError: true }).status).toBe("fail");
	});

	it("is unknown without a clean terminal summary, even with exit code 0", () => {
		const outcome = parseOutcome("diff --git a/x b/x", { exitCode: 0 });
		expect(outcome.status).toBe("unknown");
		expect(outcome.runner).toBe("exit-status");
	});

	it("reads a typed exit status from the output", () => {
		const outcome = parseOutcome(lines("building", "Process exited with code 2"));
		expect(outcome.exitCode).toBe(2);
		expect(outcome.status).toBe("fail");
		expect(parseOutcome("make: *** [all] Error 2\nexit code 2").exitCode).toBe(2);
	});

	it("treats a crash after the last clean summary as a failure", () => {
		const outcome = parseOutcome(
			lines("9 passed in 0.1s", "Traceback (most recent call last):", '  File "x.py", line 1', "RuntimeError: boom"),
		);
		expect(outcome.status).toBe("fail");
	});

	it("does not let a later clean binary hide an earlier cargo failure", () => {
		const outcome = parseOutcome(
			lines(
				"test tests::parses ... FAILED",
				"test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s",
				"test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s",
			),
		);
		expect(outcome.status).toBe("fail");
		expect(outcome.counts).toEqual({ passed: 5, failed: 1, skipped: 0 });
		expect(outcome.failingIds).toEqual(["tests::parses"]);
	});
});

describe("runners beyond the labelled corpus", () => {
	it("go test", () => {
		const outcome = parseOutcome(
			lines(
				"=== RUN   TestAdd",
				"--- FAIL: TestAdd (0.00s)",
				"    math_test.go:12: got 3, want 4",
				"FAIL",
				"FAIL\texample.com/math\t0.004s",
				"ok  \texample.com/strings\t0.002s",
			),
		);
		expect(outcome.failingIds).toEqual(["TestAdd"]);
		expect(outcome.locations[0]).toMatchObject({ file: "math_test.go", line: 12 });
		expect(outcome.status).toBe("fail");
		expect(outcome.runner).toBe("go");
	});

	it("maven surefire", () => {
		const outcome = parseOutcome(
			lines(
				"[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in com.example.AppTest",
				"[ERROR] testSum(com.example.AppTest)  Time elapsed: 0.01 s  <<< FAILURE!",
				"[INFO] Results:",
				"[ERROR] Failures: ",
				"[ERROR]   AppTest.testSum:25 expected:<4> but was:<3>",
				"[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0",
				"[INFO] BUILD FAILURE",
			),
		);
		expect(outcome.failingIds).toEqual(["testSum(com.example.AppTest)", "AppTest.testSum"]);
		expect(outcome.counts).toEqual({ total: 3, failed: 1, errors: 0, skipped: 0, passed: 2 });
		expect(outcome.runner).toBe("maven");
		expect(outcome.status).toBe("fail");
	});

	it("gradle", () => {
		const outcome = parseOutcome(
			lines(
				"AppTest > sumsTwoNumbers() FAILED",
				"    org.opentest4j.AssertionFailedError at AppTest.java:12",
				"3 tests completed, 1 failed",
				"BUILD FAILED in 2s",
			),
		);
		expect(outcome.failingIds).toEqual(["AppTest > sumsTwoNumbers()"]);
		expect(outcome.counts).toEqual({ total: 3, failed: 1, skipped: 0, passed: 2 });
		expect(outcome.status).toBe("fail");
	});

	it("a clean gradle or maven build is a pass", () => {
		expect(parseOutcome("BUILD SUCCESSFUL in 3s").status).toBe("pass");
		expect(parseOutcome("[INFO] BUILD SUCCESS").status).toBe("pass");
	});

	it("unittest with OK", () => {
		const outcome = parseOutcome(lines("......", "-------", "Ran 6 tests in 0.01s", "", "OK (skipped=1)"));
		expect(outcome).toMatchObject({ runner: "unittest", status: "pass", counts: { total: 6, skipped: 1, passed: 5 } });
	});

	it("unittest-looking lines without a unittest run are not ids, unless failure-marked in a run that did not exit 0", () => {
		const text = lines("ERROR: Could not find a version that satisfies the requirement foo", "FAIL: see the log");
		expect(parseOutcome(text, { exitCode: 0 }).failingIds).toEqual([]);
		expect(parseOutcome(text).failingIds).toEqual(["see the log"]);
	});

	it("mocha numbered lines count only in a mocha run", () => {
		expect(parseOutcome(lines("Steps:", "  1) open the file", "  2) save it")).failingIds).toEqual([]);
		const outcome = parseOutcome(
			lines(
				"  1) adds numbers",
				"",
				"  0 passing (3ms)",
				"  1 failing",
				"",
				"  1) math",
				"       adds numbers:",
				"     AssertionError: 1 == 2",
			),
		);
		// The progress line's bare title names the test the details name by its whole path.
		expect(outcome.failingIds).toEqual(["math adds numbers"]);
		expect(outcome.status).toBe("fail");
	});

	it("jest", () => {
		const outcome = parseOutcome(
			lines(
				"FAIL src/sum.test.ts",
				"  ● math › adds",
				"",
				"    expect(received).toBe(expected)",
				"      at Object.<anonymous> (src/sum.test.ts:4:17)",
				"  ● Console",
				"Tests:       1 failed, 3 passed, 4 total",
			),
		);
		expect(outcome.failingIds).toEqual(["math › adds"]);
		expect(outcome.counts).toEqual({ failed: 1, passed: 3, total: 4 });
		expect(outcome.locations[0]).toMatchObject({ file: "src/sum.test.ts", line: 4, column: 17 });
	});

	it("TAP", () => {
		const outcome = parseOutcome(
			lines("TAP version 13", "ok 1 - parses", "not ok 2 - formats", "not ok 3 - later # TODO", "# pass 1", "# fail 1"),
		);
		expect(outcome.failingIds).toEqual(["formats"]);
		expect(outcome.runner).toBe("tap");
		expect(outcome.status).toBe("fail");
	});

	it("a generic counted summary without a duration", () => {
		const outcome = parseOutcome("12 passed, 0 failed");
		expect(outcome).toMatchObject({ runner: "generic", status: "pass", counts: { passed: 12, failed: 0 } });
	});
});

describe("locations", () => {
	it("reads every shape and lists library frames after project frames", () => {
		const outcome = parseOutcome(
			lines(
				"    at Object.<anonymous> (node_modules/expect/build/index.js:10:5)",
				"    at run (src/app.js:20:3)",
				'  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode',
				"src/x.ts(3,7): error TS2322: Type 'a' is not assignable to type 'b'.",
				"  --> src/lib.rs:10:5",
				"pkg/file.go:12: bad",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual([
			"src/app.js:20",
			"src/x.ts:3",
			"src/lib.rs:10",
			"pkg/file.go:12",
			"node_modules/expect/build/index.js:10",
			"/usr/lib/python3.11/json/decoder.py:337",
		]);
	});

	it("does not mistake times, URLs or node internals for locations", () => {
		const outcome = parseOutcome(
			lines(
				"Start at 14:22:59",
				"see https://example.com:8080/x",
				"    at process.processImmediate (node:internal/timers:483:21)",
			),
		);
		expect(outcome.locations).toEqual([]);
	});
});

describe("bounded work and memory", () => {
	it("handles a 10 MB line quickly", () => {
		const started = performance.now();
		const outcome = parseOutcome(`${"ab:1 (x".repeat(1_500_000)}`);
		expect(performance.now() - started).toBeLessThan(5_000);
		expect(outcome.status).toBe("unknown");
	});

	it("caps what it keeps however many failures stream through", () => {
		const scanner = createOutcomeScanner();
		for (let i = 1; i <= 30_000; i++) {
			scanner.line(`FAILED tests/test_x.py::test_${i} - ValueError: bad ${i}`, i * 2 - 1);
			scanner.line(`tests/test_x.py:${i}: in test_${i}`, i * 2);
		}
		scanner.line("==== 30000 failed in 9.00s ====", 60_001);
		const outcome = scanner.finish();
		expect(outcome.failingIds.length).toBe(5000);
		expect(outcome.failingIds[0]).toBe("tests/test_x.py::test_1");
		expect(outcome.exceptions.length).toBeLessThanOrEqual(500);
		expect(outcome.locations.length).toBeLessThanOrEqual(4096 + 256);
		expect(outcome.counts).toEqual({ failed: 30000 });
	});
});

describe("outcomeSignature", () => {
	const run = (duration: string, order: string[]) =>
		parseOutcome(
			lines(
				...order.map((id) => `FAILED ${id} - AssertionError: at 0x7f3a2b1c`),
				`==== 2 failed, 5 passed in ${duration} ====`,
			),
		);

	it("is equal for the same outcome with other durations and failure order", () => {
		const a = run("0.51s", ["tests/a.py::test_one", "tests/a.py::test_two"]);
		const b = run("12.02s", ["tests/a.py::test_two", "tests/a.py::test_one"]);
		expect(outcomeSignature(a)).toBe(outcomeSignature(b));
	});

	it("differs when the failing set or counts change", () => {
		const a = run("0.5s", ["tests/a.py::test_one", "tests/a.py::test_two"]);
		const b = run("0.5s", ["tests/a.py::test_one", "tests/a.py::test_three"]);
		expect(outcomeSignature(a)).not.toBe(outcomeSignature(b));
		const c = parseOutcome("==== 9 passed in 0.5s ====");
		const d = parseOutcome("==== 10 passed in 0.5s ====");
		expect(outcomeSignature(c)).not.toBe(outcomeSignature(d));
	});
});

describe("stripAnsi", () => {
	it("removes colour, cursor, OSC hyperlink and charset escapes", () => {
		expect(stripAnsi("\u001b[1;31mred\u001b[0m \u001b]8;;http://x\u0007link\u001b]8;;\u0007 ok\u001b(B")).toBe(
			"red link ok",
		);
	});
});

describe("hints", () => {
	it("the command confirms a runner whose summary was cut off", () => {
		const cut = lines("FAILED tests/test_a.py::test_one - ValueError: bad", "[... output truncated ...]");
		expect(parseOutcome(cut, { exitCode: 0 }).failingIds).toEqual([]);
		expect(parseOutcome(cut, { command: "python -m pytest -x tests", exitCode: 0 }).failingIds).toEqual([
			"tests/test_a.py::test_one",
		]);
	});
});

describe("failure evidence without a known runner or exit status", () => {
	it("takes an unknown runner's failure-marked lines as failing ids, unless the command exited 0", () => {
		const log = lines("FAIL: record 237 could not be imported", "not ok 4 - parses dates", "✖ keeps & and < (1.2ms)");
		expect(parseOutcome(log).failingIds).toEqual(["record 237 could not be imported", "parses dates", "keeps & and <"]);
		expect(parseOutcome(log).status).toBe("fail");
		expect(parseOutcome(log, { exitCode: 0 }).failingIds).toEqual([]);
	});

	it("never reads a clean summary as a pass when a failure-shaped line precedes it", () => {
		const log = lines(
			"FAIL Required test coverage of 90% not reached. Total coverage: 85.00%",
			"============================= 300 passed in 62.31s (0:01:02) =============================",
		);
		const outcome = parseOutcome(log);
		expect(outcome.status).toBe("fail");
		expect(outcome.counts).toEqual({ passed: 300 });
		expect(parseOutcome(lines("Error: cache miss for key 7", "300 passed in 2.10s")).status).toBe("unknown");
		expect(parseOutcome("300 passed in 2.10s").status).toBe("pass");
	});

	it("reads pytest summaries of runs of a minute or more", () => {
		expect(parseOutcome("===== 3 failed, 297 passed in 62.31s (0:01:02) =====").counts).toEqual({
			failed: 3,
			passed: 297,
		});
		expect(parseOutcome("1 passed in 3661.00s (1:01:01)").status).toBe("pass");
	});

	it("reads node's dot reporter: its failures are failing ids", () => {
		const dot = lines(
			"XXX.",
			"",
			"Failed tests:",
			"",
			"✖ adds one (0.3ms)",
			"  AssertionError [ERR_ASSERTION]: 1 !== 2",
			"✖ adds two (0.2ms)",
		);
		const outcome = parseOutcome(dot, { exitCode: 0 });
		expect(outcome.runner).toBe("node-test");
		expect(outcome.failingIds).toEqual(["adds one", "adds two"]);
	});
});

describe("failing ids", () => {
	it("names a mocha test whose title path ends the output, streamed or whole", () => {
		const text = ["  1 failing", "  1) suite", "       test:", ""];
		expect(parseOutcome(text.join("\n"), { command: "mocha" }).failingIds).toEqual(["suite test"]);
		const scanner = createOutcomeScanner();
		text.forEach((line, index) => {
			scanner.line(line, index + 1);
		});
		expect(scanner.finish({ command: "mocha" }).failingIds).toEqual(["suite test"]);
	});

	it("clips a long id or message before a character cut in half, never inside it", () => {
		const prefix = "tests/x.py::test_";
		const id = `${prefix}${"a".repeat(499 - prefix.length)}\u{1F600}z`;
		const outcome = parseOutcome(lines(`FAILED ${id} - ValueError: ${"m".repeat(299)}\u{1F600}!`));
		expect(outcome.failingIds).toEqual([id.slice(0, 499)]);
		expect(outcome.exceptions).toEqual([{ type: "ValueError", message: "m".repeat(299), line: 1 }]);
	});

	it("gives a mocha title read on an earlier line none of the spaces that end the next one", () => {
		const outcome = parseOutcome(
			lines(
				"  1 failing",
				"",
				"  1) suite",
				"       b:",
				"     AssertionError: expected b  ",
				"      at Context.<anonymous> (test/x.js:3:9)",
			),
			{ command: "mocha" },
		);
		expect(outcome.failingIds).toEqual(["suite b"]);
	});

	it("lists each test once, in first-seen order, across verbose lines, xdist lines and the short summary", () => {
		const outcome = parseOutcome(
			lines(
				"============================= test session starts ==============================",
				"tests/test_b.py::test_two FAILED                                        [ 50%]",
				"[gw1] [ 75%] FAILED tests/test_a.py::test_one",
				"=========================== short test summary info ============================",
				"FAILED tests/test_a.py::test_one - AssertionError: x",
				"FAILED tests/test_b.py::test_two - AssertionError: y",
				"========================= 2 failed, 2 passed in 0.05s ==========================",
			),
		);
		expect(outcome.failingIds).toEqual(["tests/test_b.py::test_two", "tests/test_a.py::test_one"]);
	});

	it("drops a bare jest title once its full `suite › test` id is known", () => {
		const outcome = parseOutcome(
			lines(
				"FAIL src/sum.test.ts",
				"  math",
				"    ✕ adds (3 ms)",
				"    ✓ subtracts (1 ms)",
				"  ● math › adds",
				"Tests:       1 failed, 1 passed, 2 total",
			),
		);
		expect(outcome.failingIds).toEqual(["math › adds"]);
	});

	it("keeps a bare title when no full id names the test", () => {
		const outcome = parseOutcome(lines("✖ parses dates (1.2ms)", "ℹ tests 3", "ℹ pass 2", "ℹ fail 1"));
		expect(outcome.failingIds).toEqual(["parses dates"]);
		expect(outcome.runner).toBe("node-test");
	});
});

describe("outcomeSignature keeps what names a test", () => {
	it("tells apart ids that differ only by a number in the test's name", () => {
		const a = parseOutcome(lines("FAILED tests/t.py::test_ms[1s] - AssertionError", "==== 1 failed in 0.1s ===="));
		const b = parseOutcome(lines("FAILED tests/t.py::test_ms[2s] - AssertionError", "==== 1 failed in 0.1s ===="));
		expect(outcomeSignature(a)).not.toBe(outcomeSignature(b));
	});

	it("masks object addresses inside parameter ids", () => {
		const a = parseOutcome(
			lines("FAILED tests/t.py::test_obj[<Foo at 0x7f00aa11>] - AssertionError", "==== 1 failed in 0.1s ===="),
		);
		const b = parseOutcome(
			lines("FAILED tests/t.py::test_obj[<Foo at 0x7f00bb22>] - AssertionError", "==== 1 failed in 0.3s ===="),
		);
		expect(outcomeSignature(a)).toBe(outcomeSignature(b));
	});
});

describe("verdicts of builds and checkers without counts", () => {
	it("reads clean mypy, ruff and cargo builds as a pass", () => {
		expect(parseOutcome("Success: no issues found in 8 source files").status).toBe("pass");
		expect(parseOutcome("All checks passed!").status).toBe("pass");
		const cargo = parseOutcome(
			lines("   Compiling semver v1.0.0", "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.52s"),
		);
		expect(cargo).toMatchObject({ runner: "cargo", status: "pass" });
	});

	it("reads a failed make recipe and an uncaught Java exception as failures", () => {
		expect(parseOutcome("make: *** [Makefile:12: all] Error 2").status).toBe("fail");
		const java = parseOutcome(
			lines(
				'Exception in thread "main" java.lang.IllegalStateException: not ready',
				"\tat com.example.App.run(App.java:12)",
				"Caused by: java.io.IOException: disk full",
			),
		);
		expect(java.exceptions.map((e) => e.type)).toEqual(["java.lang.IllegalStateException", "java.io.IOException"]);
		expect(java.locations[0]).toMatchObject({ file: "App.java", line: 12 });
		expect(java.status).toBe("fail");
	});

	it("a compile error after cargo's test build still fails", () => {
		const outcome = parseOutcome(
			lines(
				"error[E0308]: mismatched types",
				"  --> src/eval.rs:85:18",
				"error: could not compile `semver` (lib) due to 1 previous error",
			),
		);
		expect(outcome.status).toBe("fail");
		expect(outcome.exceptions[0]).toMatchObject({ type: "E0308", message: "mismatched types" });
	});
});

describe("node's test runner groups", () => {
	it("does not list a TAP suite that failed only through its tests", () => {
		const outcome = parseOutcome(
			lines(
				"TAP version 13",
				"    not ok 1 - parses",
				"      ---",
				"      type: 'test'",
				"      ...",
				"not ok 1 - parser",
				"  ---",
				"  type: 'suite'",
				"  failureType: 'subtestsFailed'",
				"  ...",
				"# pass 0",
				"# fail 1",
			),
		);
		expect(outcome.failingIds).toEqual(["parses"]);
	});

	it("does not list a spec suite's own cross line", () => {
		const outcome = parseOutcome(
			lines("▶ parser", "  ✖ parses (0.5ms)", "✖ parser (1.1ms)", "ℹ tests 1", "ℹ pass 0", "ℹ fail 1"),
		);
		expect(outcome.failingIds).toEqual(["parser > parses"]);
	});
});
