import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";

const lines = (...text: string[]) => text.join("\n");

describe("linters and formatters", () => {
	it("reads a rule code after a position as a diagnostic (flake8, pylint, ruff's concise format)", () => {
		// flake8 7.4, pylint 4.1 and ruff 0.16 --output-format=concise print no verdict of their own.
		const text = lines(
			"pkg/mod_1.py:1:1: F401 'os' imported but unused",
			"************* Module mod_20",
			"pkg/mod_20.py:8:0: W0311: Bad indentation. Found 2 spaces, expected 4 (bad-indentation)",
			"pkg/mod_9.py:11:13: F821 Undefined name `undefined_name_9`",
			"pkg/mod_9.py:2:1: PLR0913 Too many arguments in function definition (6 > 5)",
		);
		const outcome = parseOutcome(text);
		expect(outcome.status).toBe("fail");
		expect(outcome.exceptions.map((e) => `${e.type}: ${e.message}`)).toEqual([
			"F401: 'os' imported but unused",
			"W0311: Bad indentation. Found 2 spaces, expected 4 (bad-indentation)",
			"F821: Undefined name `undefined_name_9`",
			"PLR0913: Too many arguments in function definition (6 > 5)",
		]);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}:${l.column}`)).toEqual([
			"pkg/mod_1.py:1:1",
			"pkg/mod_20.py:8:0",
			"pkg/mod_9.py:11:13",
			"pkg/mod_9.py:2:1",
		]);
	});

	it("does not read prose or a warning with a position as a rule code", () => {
		const outcome = parseOutcome(
			lines(
				"src/app.py:12: DeprecationWarning: use spam instead",
				"notes.txt:3:1: See the CHANGELOG for details",
				"3 passed in 0.01s",
			),
		);
		expect(outcome.exceptions).toEqual([]);
		expect(outcome.status).toBe("pass");
	});

	it("takes the code mypy --pretty wraps onto the next line, with the whole message", () => {
		const outcome = parseOutcome(
			lines(
				'pkg/mod_9.py:5: error: Unsupported operand types for + ("int" and "str") ',
				"[operator]",
				'        y = x + "a"',
				"                ^~~",
				'pkg/mod_9.py:6: error: Incompatible return value type (got "int", expected',
				'"str")  [return-value]',
				"Found 2 errors in 1 file (checked 60 source files)",
			),
		);
		expect(outcome.exceptions).toEqual([
			{ type: "operator", message: 'Unsupported operand types for + ("int" and "str")', line: 2 },
			{ type: "return-value", message: 'Incompatible return value type (got "int", expected "str")', line: 6 },
		]);
		expect(outcome.status).toBe("fail");
	});

	it("reads black's and ruff format's --check verdict", () => {
		const failed = lines(
			"would reformat /tmp/lint/pkg/mod_1.py",
			"",
			"Oh no! 💥 💔 💥",
			"60 files would be reformatted, 2 files would be left unchanged.",
		);
		expect(parseOutcome(failed).status).toBe("fail");
		expect(parseOutcome(lines("Would reformat: pkg/mod_1.py", "60 files would be reformatted")).status).toBe("fail");
		expect(parseOutcome(lines("All done! ✨ 🍰 ✨", "5 files would be left unchanged.")).status).toBe("pass");
		expect(
			parseOutcome(
				lines(
					"error: cannot format x.py: Cannot parse",
					"1 file would be left unchanged, 1 file would fail to reformat.",
				),
			).status,
		).toBe("fail");
	});
});

describe("cargo test", () => {
	it("takes a panic's message from the line after it (Rust 1.73+), and a thread's panic as its own", () => {
		// cargo 1.9x with RUST_BACKTRACE set: `thread 'name' (tid) panicked at path:line:col:` then the message.
		const text = lines(
			"---- tests::it_fails stdout ----",
			"",
			"thread 'tests::it_fails' (17453) panicked at src/lib.rs:25:29:",
			"assertion `left == right` failed: math is broken",
			"  left: 4",
			" right: 5",
			"stack backtrace:",
			"   4: calc::tests::it_fails",
			"             at ./src/lib.rs:25:29",
			"---- tests::thread_panic stdout ----",
			"",
			"thread '<unnamed>' (17461) panicked at src/lib.rs:30:41:",
			"worker died: 42",
			"",
			"thread 'tests::thread_panic' (17459) panicked at src/lib.rs:31:18:",
			"called `Result::unwrap()` on an `Err` value: Any { .. }",
		);
		const outcome = parseOutcome(text);
		expect(outcome.exceptions).toEqual([
			{ type: "panic", message: "assertion `left == right` failed: math is broken", line: 4 },
			{ type: "panic", message: "worker died: 42", line: 13 },
			{ type: "panic", message: "called `Result::unwrap()` on an `Err` value: Any { .. }", line: 16 },
		]);
		// The backtrace's `./src/lib.rs:25` is the panic's `src/lib.rs:25`, listed once.
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual([
			"src/lib.rs:25",
			"src/lib.rs:30",
			"src/lib.rs:31",
		]);
		// Cut right after the panic's line, or followed by a blank line: the panic is still there.
		for (const end of [[], [""]]) {
			expect(parseOutcome(lines("thread 'main' (9) panicked at src/main.rs:3:5:", ...end)).exceptions).toEqual([
				{ type: "panic", message: "thread 'main' panicked", line: 1 },
			]);
		}
	});

	it("names a should_panic test without its mode, and reads the names listed under `failures:`", () => {
		// `cargo test -- --nocapture`: a panic's output lands inside a result line, so only the list names
		// integ_fail exactly.
		const text = lines(
			"running 3 tests",
			"test tests::should_panic_none - should panic ... FAILED",
			"test integ_ok ... ok",
			"test integ_fail ...   FAILED ",
			"thread 'integ_overflow' (19963) panicked at tests/integ.rs:3:57:",
			"index out of bounds: the len is 1 but the index is 5",
			"test integ_overflow ... FAILED",
			"",
			"failures:",
			"",
			"failures:",
			"    integ_fail",
			"    integ_overflow",
			"    src/lib.rs - add (line 3)",
			"    tests::should_panic_none",
			"",
			"test result: FAILED. 1 passed; 4 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.18s",
		);
		expect(parseOutcome(text).failingIds).toEqual([
			"tests::should_panic_none",
			"integ_fail",
			"integ_overflow",
			"src/lib.rs - add (line 3)",
		]);
	});
});

describe("rustc", () => {
	it("reads an error code in --message-format=short", () => {
		const outcome = parseOutcome(
			lines(
				"   Compiling broken v0.1.0 (/tmp/rs/broken)",
				"src/lib.rs:1:30: error[E0308]: mismatched types: expected `String`, found `i32`",
				"src/lib.rs:3:45: warning: unused variable: `t`: help: if this is intentional, prefix it with an underscore: `_t`",
				"error: could not compile `broken` (lib) due to 1 previous error; 1 warning emitted",
			),
		);
		expect(outcome.exceptions).toEqual([
			{ type: "E0308", message: "mismatched types: expected `String`, found `i32`", line: 2 },
		]);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["src/lib.rs:1", "src/lib.rs:3"]);
		expect(outcome.status).toBe("fail");
	});
});

describe("maven surefire 3", () => {
	it("names the failing cases of surefire 3 and a test that ran many times, not its runs", () => {
		// mvn -B test with surefire 3.2.5 and JUnit 5 (a parameterized test and a @TestFactory of 800).
		const text = lines(
			"[ERROR] Tests run: 8, Failures: 4, Errors: 2, Skipped: 0, Time elapsed: 0.014 s <<< FAILURE! -- in demo.CalcTest$Inner",
			"[ERROR] demo.CalcTest.npe -- Time elapsed: 0.016 s <<< ERROR!",
			'java.lang.NullPointerException: Cannot invoke "Object.toString()" because "o" is null',
			"\tat demo.Calc.name(Calc.java:4)",
			"[ERROR] demo.CalcTest.param(int)[2] -- Time elapsed: 0.011 s <<< FAILURE!",
			"org.opentest4j.AssertionFailedError: x too big ==> expected: <true> but was: <false>",
			"[ERROR] demo.ManyTest.many -- Time elapsed: 0.027 s <<< ERROR!",
			"java.lang.IllegalStateException: state 0",
			"[INFO] Results:",
			"[INFO] ",
			"[ERROR] Failures: ",
			"[ERROR]   CalcTest.param:11 x too big ==> expected: <true> but was: <false>",
			"[ERROR] Errors: ",
			'[ERROR]   CalcTest.npe:10 » NullPointer Cannot invoke "Object.toString()" because "o" is null',
			"[ERROR] demo.ManyTest.many",
			"[ERROR]   Run 1: ManyTest.lambda$many$0:7 IllegalState state 0",
			"[INFO]   Run 2: PASS",
			"[ERROR]   Run 10: ManyTest.lambda$many$0:7 IllegalState state 9",
			"[INFO] ",
			"[ERROR] Tests run: 9, Failures: 4, Errors: 3, Skipped: 0",
			"[INFO] BUILD FAILURE",
		);
		const outcome = parseOutcome(text);
		expect(outcome.failingIds).toEqual([
			"demo.CalcTest.npe",
			"demo.CalcTest.param(int)[2]",
			"demo.ManyTest.many",
			"CalcTest.param",
			"CalcTest.npe",
		]);
		expect(outcome.status).toBe("fail");
	});
});

describe("javac through maven", () => {
	it("reads maven-compiler-plugin's `path:[line,col]` as a location", () => {
		// mvn -B test, maven-compiler-plugin 3.13.0 on JDK 17.
		const outcome = parseOutcome(
			lines(
				"[ERROR] COMPILATION ERROR : ",
				"[INFO] -------------------------------------------------------------",
				"[ERROR] /tmp/mvn/src/main/java/demo/Calc.java:[4,49] cannot find symbol",
				"  symbol:   method toStrin()",
				"[ERROR] /tmp/mvn/src/main/java/demo/Calc.java:[5,34] incompatible types: java.lang.String cannot be converted to int",
				"[INFO] BUILD FAILURE",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}:${l.column}`)).toEqual([
			"/tmp/mvn/src/main/java/demo/Calc.java:4:49",
			"/tmp/mvn/src/main/java/demo/Calc.java:5:34",
		]);
		expect(outcome.status).toBe("fail");
	});
});

describe("cargo test binaries that die", () => {
	it("reads the signal that killed a test binary as its exception", () => {
		// A test calling std::process::abort(): libtest prints no result for it.
		const outcome = parseOutcome(
			lines(
				"running 2 tests",
				"error: test failed, to rerun pass `--lib`",
				"",
				"Caused by:",
				"  process didn't exit successfully: `/tmp/rs/aborts/target/debug/deps/aborts-d4ddfe70b90f0bef` (signal: 6, SIGABRT: process abort signal)",
			),
		);
		expect(outcome.exceptions).toEqual([{ type: "SIGABRT", message: "process abort signal", line: 5 }]);
		expect(outcome.status).toBe("fail");
	});
});

describe("Java stack frames", () => {
	it("lists a frame of a class in a named module (the JDK's) after the project's frames", () => {
		// JUnit 5 under surefire 3 on JDK 17.
		const outcome = parseOutcome(
			lines(
				'java.lang.NullPointerException: Cannot invoke "Object.toString()" because "o" is null',
				"\tat java.base/java.util.Objects.requireNonNull(Objects.java:233)",
				"\tat app//demo.Calc.name(Calc.java:4)",
				"\tat demo.CalcTest.npe(CalcTest.java:10)",
				"\tat java.base/java.lang.reflect.Method.invoke(Method.java:569)",
				// A Node frame with a relative path is the project's.
				"    at src/sum.js:3:9",
			),
		);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual([
			"Calc.java:4",
			"CalcTest.java:10",
			"src/sum.js:3",
			"Objects.java:233",
			"Method.java:569",
		]);
	});
});
