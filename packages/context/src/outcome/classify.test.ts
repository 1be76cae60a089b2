import { describe, expect, it } from "vitest";
import { classifyLine, type LineKind } from "./index.js";

const cases: [LineKind, string[]][] = [
	["blank", ["", "   ", "\t"]],
	[
		"summary",
		[
			"==== 1 failed, 8 passed in 0.10s ====",
			"5 failed, 292 passed in 1.39s",
			"Ran 901 tests in 19.324s",
			"OK",
			"FAILED (failures=1, errors=2)",
			"Tests:       4 failed, 163 passed, 167 total",
			"      Tests  30 failed | 447 passed (477)",
			" Test Files  2 failed (2)",
			"test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out",
			"  1954 passing (437ms)",
			"  2 failing",
			"# fail 1",
			"ℹ pass 15",
			"Found 4 errors in the same file, starting at: src/index.ts:424",
			"✖ 7 problems (3 errors, 4 warnings)",
			"ok  \texample.com/math\t0.004s",
			"[INFO] BUILD SUCCESS",
			"BUILD FAILED in 2s",
			"[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0",
			"3 tests completed, 1 failed",
			"!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
			"Process exited with code 1",
			"\u001b[32m==== 9 passed in 0.2s ====\u001b[0m",
			"***Test Failed*** 1 failures.",
		],
	],
	[
		"failure",
		[
			"FAILED tests/test_x.py::TestA::test_b - AssertionError: x",
			"tests/test_x.py::TestA::test_b FAILED                     [ 12%]",
			"FAIL: test_empty (tests.test_more.FirstTests.test_empty)",
			"test_invalid (tests.test_data.TestData.test_invalid) ... ERROR",
			"UNEXPECTED SUCCESS: test_fixed (test_ut.TestA.test_fixed)",
			"SUBFAILED(i=2, label='a b') test_ut.py::TestA::test_sub - AssertionError: 2 n...",
			"test_fixed (test_ut.TestA.test_fixed) ... unexpected success",
			" FAIL  src/index.spec.ts > path-to-regexp > should match",
			"  ● ms(number) › should support hours",
			"   × //foo//bar// 6ms",
			"✖ getExtension() (0.563828ms)",
			"not ok 3 - define()",
			"not ok 2 Calc adds wrong",
			"not ok 2 - test/a.test.ts > parses # time=1.2ms",
			"  ✘ [fail]: a › adds wrong",
			"--- FAIL: TestAdd (0.00s)",
			"test tests::parses ... FAILED",
			"AppTest > sumsTwoNumbers() FAILED",
			"  1) duplicate-key",
		],
	],
	[
		"exception",
		[
			"ValueError: bad",
			"E   AssertionError: assert 1 == 2",
			"AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:",
			"thread 'main' panicked at src/main.rs:3:5:",
			"KeyboardInterrupt",
		],
	],
	[
		"location",
		[
			'  File "/home/x/app.py", line 12, in <module>',
			"    at Object.<anonymous> (src/index.test.ts:146:12)",
			"  --> src/lib.rs:10:5",
			" ❯ src/index.spec.ts:266:27",
			"tests/test_validators.py:11: in <module>",
			"pkg/file.go:12:",
		],
	],
	[
		"error",
		[
			"error[E0308]: mismatched types",
			"error: could not compile `semver`",
			"npm error code ERESOLVE",
			"[ERROR] Failed to execute goal",
			"src/index.ts(424,3): error TS2322: Type 'x' is not assignable",
			"src/x.py:37: error: Incompatible return value type  [return-value]",
			"   7:1  error  Unexpected var, use let or const instead  no-var",
			"2024-05-01 12:00:00 ERROR connection refused",
		],
	],
	[
		"warning",
		[
			"warning: unused variable: `x`",
			"npm warn deprecated glob@7.2.3",
			"  /x/y.py:3: DeprecationWarning: pkg_resources is deprecated",
			"  14:5  warning  'options' is never reassigned  prefer-const",
			"[WARNING] Using platform encoding",
		],
	],
	[
		"trace",
		[
			"DEBUG: resolved 12 modules",
			"[TRACE] poll tick 3",
			"2024-05-01T12:00:00.123Z DEBUG worker started",
			"12:00:01.002 [debug] cache hit key=a",
			"npm verbose cli /usr/bin/node",
			"urllib3.connectionpool DEBUG Starting new HTTPS connection",
		],
	],
	[
		"progress",
		[
			"Downloading numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl (18.2 MB)",
			"   ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 18.2/18.2 MB 42.1 MB/s eta 0:00:00",
			" 45%|████▌     | 45/100 [00:01<00:02, 30.1it/s]",
			"[=====>          ] 35%",
			"⠋ Installing dependencies",
			"Collecting attrs>=22.2.0",
			"....................................................F... [ 42%]",
			"Receiving objects:  57% (1234/2165)",
			"Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]",
			"Reading package lists... Done",
			"3f4ca61aafcd: Pull complete",
			"[INFO] Downloading from central: https://repo.maven.apache.org/maven2/x.pom",
			"> Task :compileJava",
			"    Updating crates.io index",
		],
	],
	[
		"usage-option",
		[
			"  -h, --help            show this help message and exit",
			"  --out-dir <dir>       Where to write the output",
			"  -v                    verbose",
			"      --no-color        Disable colours",
		],
	],
	[
		"bullet",
		[
			"- Return 0 succeeded, 1 failed/cancelled when partial",
			"* keep the goal open",
			"  1. open the file",
			"- [ ] write tests",
		],
	],
	[
		"plain",
		[
			"✖ todo thing (0.280621ms) # later",
			"✖ failing tests:",
			"not ok 3 - todo thing # TODO later",
			"    not ok 6 - todo one # SKIP",
			"collected 1376 items",
			"except ValueError:",
			"    raise ValueError(f'bad {x}')",
			"self.assertRaises(KeyError)",
			"expect(fn).toThrow(TypeError)",
			"return Result(errors=errors)",
			"The report says 1 failed, 8 passed in 0.10s for the sample run.",
		],
	],
];

describe("classifyLine", () => {
	for (const [kind, samples] of cases) {
		it.each(samples)(`classifies %j as ${kind}`, (line) => {
			expect(classifyLine(line)).toBe(kind);
		});
	}

	it("classifies a carriage-return redraw as progress", () => {
		expect(classifyLine("step 1\rstep 2\rstep 3")).toBe("progress");
	});

	it("classifies a 10 MB line without hanging", () => {
		const started = performance.now();
		expect(classifyLine("a".repeat(10_000_000))).toBe("plain");
		expect(performance.now() - started).toBeLessThan(2_000);
	});
});

describe("pytest lines of a test file whose folders hold spaces", () => {
	it("are failure lines, in the short summary and in verbose output", () => {
		expect(classifyLine("FAILED my tests/test_a.py::test_x[a b] - assert 0 < 0")).toBe("failure");
		expect(classifyLine("my tests/test_a.py::test_x FAILED                  [ 50%]")).toBe("failure");
		expect(classifyLine("FAILED to reach the server at example.com")).not.toBe("failure");
	});
});
