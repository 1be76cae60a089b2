import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";

const lines = (...text: string[]) => text.join("\n");

describe("Python tracebacks", () => {
	it("takes the exception a Python traceback ends with, whatever its name", () => {
		const outcome = parseOutcome(
			lines(
				"Traceback (most recent call last):",
				'  File "app/main.py", line 12, in <module>',
				"    raise SignatureExpired('old')",
				"itsdangerous.exc.SignatureExpired: old",
			),
		);
		expect(outcome.exceptions).toEqual([{ type: "itsdangerous.exc.SignatureExpired", message: "old", line: 4 }]);
		expect(outcome.locations[0]).toMatchObject({ file: "app/main.py", line: 12, at: 2 });
		expect(outcome.status).toBe("fail");
	});

	it("counts a pytest traceback's exception once: its closing `path:N: Type` line repeats its own `E` line", () => {
		const text = lines(
			"=================================== FAILURES ===================================",
			"___________________ test_x ___________________",
			">       check()",
			"E       ValueError: bad",
			"tests/test_a.py:3: ValueError",
			"During handling of the above exception, another exception occurred:",
			">       assert fixed()",
			"E       assert False",
			"tests/test_a.py:5: ValueError",
			"___________________ ERROR collecting tests/test_b.py ___________________",
			"E   TypeError: boom",
			"___________________ test_y ___________________",
			">       assert 3 == 4",
			"E       assert 3 == 4",
			"tests/test_a.py:9: TypeError",
		);
		const at = (line: string) => text.split("\n").indexOf(line) + 1;
		// The chained traceback and test_y state no type in their `E` lines: their closing lines are
		// the only record of their exceptions, whatever type an earlier traceback stated.
		expect(parseOutcome(text).exceptions).toEqual([
			{ type: "ValueError", message: "bad", line: at("E       ValueError: bad") },
			{ type: "ValueError", message: "", line: at("tests/test_a.py:5: ValueError") },
			{ type: "TypeError", message: "boom", line: at("E   TypeError: boom") },
			{ type: "TypeError", message: "", line: at("tests/test_a.py:9: TypeError") },
		]);
	});

	it("counts it once too when the `E` line names the type with its module and the closing line without", () => {
		// pytest's own output: the `E` line is `format_exception_only` (module-qualified), the closing
		// line the class's bare `__name__`.
		const text = lines(
			"=================================== FAILURES ===================================",
			"__________________________________ test_json ___________________________________",
			">           obj, end = self.scan_once(s, idx)",
			"E           json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
			"",
			"/usr/lib/python3.11/json/decoder.py:353: JSONDecodeError",
			"________________________________ test_qualified ________________________________",
			'>       raise mypkg.CustomError("custom")',
			"E       mypkg.CustomError: custom",
			"",
			"test_q.py:5: CustomError",
			"__________________________________ test_custom __________________________________",
			'>       raise MyErr("mine")',
			"E       test_q.test_custom.<locals>.MyErr: mine",
			"",
			"test_q.py:9: MyErr",
		);
		// A class defined in a function is named with `<locals>`; its closing line names it bare.
		expect(parseOutcome(text).exceptions).toEqual([
			{ type: "json.decoder.JSONDecodeError", message: "Expecting value: line 1 column 1 (char 0)", line: 4 },
			{ type: "mypkg.CustomError", message: "custom", line: 9 },
			{ type: "test_q.test_custom.<locals>.MyErr", message: "mine", line: 14 },
		]);
	});

	it("reads the `E` lines after the one stating an exception as its message, blank `E` lines included", () => {
		const text = lines(
			"E       AssertionError: Regex pattern did not match.",
			"E        Regex: 'abc'",
			"E        Input: 'xyz'",
			"",
			"tests/test_a.py:5: AssertionError",
			"E       assert f() == 2",
			"E        +  where 1 = f()",
			"E       ValueError: first line",
			"E",
			"E       Details",
			"",
			"tests/test_a.py:9: ValueError",
			"E       KeyError: 'k'",
		);
		// The closing lines repeat what their `E` lines stated; after a line that is not an `E` line, an
		// `E` line may state an exception again.
		expect(parseOutcome(text).exceptions).toEqual([
			{ type: "AssertionError", message: "Regex pattern did not match.", line: 1 },
			{ type: "ValueError", message: "first line", line: 8 },
			{ type: "KeyError", message: "'k'", line: 13 },
		]);
	});

	it("counts an exception once when pytest's short summary repeats it with its message cut short", () => {
		const text = lines(
			"E       json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes",
			"",
			"E       ValueError: bad input here",
			"=========================== short test summary info ============================",
			"FAILED tests/test_a.py::test_json - json.decoder.JSONDecodeError: Expecting propert...",
			"FAILED tests/test_a.py::test_value - ValueError: bad inp\u2026",
			"FAILED tests/test_a.py::test_other - json.decoder.JSONDecodeError: Extra data...",
		);
		// A cut message that begins no recorded one is an exception of its own.
		expect(parseOutcome(text).exceptions).toEqual([
			{
				type: "json.decoder.JSONDecodeError",
				message: "Expecting property name enclosed in double quotes",
				line: 1,
			},
			{ type: "ValueError", message: "bad input here", line: 3 },
			{ type: "json.decoder.JSONDecodeError", message: "Extra data...", line: 7 },
		]);
	});

	it("takes every exception of an exception group: the group's, each sub-exception's, nested groups'", () => {
		// Python 3.11's rendering (asyncio's TaskGroup, hypothesis, pytest): each line behind a `|` gutter.
		const text = lines(
			// The same text outside a group is not an exception (and, seen before, is still read inside one).
			"    | ValueError: v",
			"  + Exception Group Traceback (most recent call last):",
			'  |   File "app/main.py", line 9, in <module>',
			"  |     asyncio.run(main())",
			"  | ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)",
			"  +-+---------------- 1 ----------------",
			"    | Traceback (most recent call last):",
			'    |   File "app/main.py", line 3, in fetch',
			"    |     raise ValueError(",
			// A frame's source line is code, however it reads.
			"    |         None",
			"    | ValueError: v",
			"    +---------------- 2 ----------------",
			"    | ExceptionGroup: inner (1 sub-exception)",
			"    +-+---------------- 1 ----------------",
			"      | KeyError: 'k'",
			"      +------------------------------------",
			// Output after the group is read as usual.
			"ValueError: after the group",
		);
		const outcome = parseOutcome(text);
		expect(outcome.exceptions).toEqual([
			{ type: "ExceptionGroup", message: "unhandled errors in a TaskGroup (2 sub-exceptions)", line: 5 },
			{ type: "ValueError", message: "v", line: 11 },
			{ type: "ExceptionGroup", message: "inner (1 sub-exception)", line: 13 },
			{ type: "KeyError", message: "'k'", line: 15 },
			{ type: "ValueError", message: "after the group", line: 17 },
		]);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["app/main.py:9", "app/main.py:3"]);
		expect(outcome.status).toBe("fail");
	});
});

describe("pytest result lines", () => {
	it("ends a node id at the first ` - ` outside its parameter brackets", () => {
		// pytest 9's short summary of `@pytest.mark.parametrize("val", ["with - dash", "x[1]"])`.
		const outcome = parseOutcome(
			lines(
				"=========================== short test summary info ============================",
				"FAILED tests/test_basic.py::test_param[with - dash] - AssertionError: assert ...",
				"FAILED tests/test_basic.py::test_param[x[1]] - AssertionError: assert 'x[1]' ...",
				"FAILED tests/test_basic.py::test_param[a - b]",
				"FAILED tests/test_basic.py::test_plain - ValueError: a - b",
				// A parameter with a lone `[` (ids unescaped by the ini option that forfeits support).
				"FAILED test_u.py::test_u[(paren) - [br] - AssertionError: assert '(paren) - [...",
				"3 failed in 0.12s",
			),
		);
		expect(outcome.failingIds).toEqual([
			"tests/test_basic.py::test_param[with - dash]",
			"tests/test_basic.py::test_param[x[1]]",
			"tests/test_basic.py::test_param[a - b]",
			"tests/test_basic.py::test_plain",
			"test_u.py::test_u[(paren) - [br]",
		]);
		expect(outcome.exceptions.map((e) => `${e.type}: ${e.message}`)).toEqual([
			"AssertionError: assert ...",
			"AssertionError: assert 'x[1]' ...",
			"ValueError: a - b",
			"AssertionError: assert '(paren) - [...",
		]);
	});

	it("does not take the space xdist prints after a node id as part of it", () => {
		// `pytest -n 2 -v`: each result line ends with a space.
		const outcome = parseOutcome(
			lines(
				"[gw0] [  9%] FAILED tests/test_basic.py::test_div_zero ",
				"[gw0] [ 36%] FAILED tests/test_basic.py::test_param[sp ace ] ",
				"=========================== short test summary info ============================",
				"FAILED tests/test_basic.py::test_div_zero - ZeroDivisionError: division by zero",
				"FAILED tests/test_basic.py::test_param[sp ace ] - AssertionError: assert 'sp ...",
				"2 failed in 0.50s",
			),
		);
		expect(outcome.failingIds).toEqual([
			"tests/test_basic.py::test_div_zero",
			"tests/test_basic.py::test_param[sp ace ]",
		]);
	});
});

describe("exceptions past the cap", () => {
	it("keeps a type first seen after 500 distinct exceptions", () => {
		// A parametrised loop whose 600 failures each raise `ValueError: bad value N`, then two other tests.
		const block = (e: string, type: string) => [`E       ${e}`, "", `tests/test_many.py:5: ${type}`];
		const loop = Array.from({ length: 600 }, (_, i) => block(`ValueError: bad value ${i}`, "ValueError")).flat();
		const text = lines(
			"=================================== FAILURES ===================================",
			...loop,
			...block("RuntimeError: deep failure 6", "RuntimeError"),
			...block("TypeError: object of type 'int' has no len()", "TypeError"),
			...block("ValueError: bad value 9999", "ValueError"),
			"602 failed in 7.18s",
		);
		const at = (line: string) => text.split("\n").indexOf(line) + 1;
		const outcome = parseOutcome(text);
		const types = outcome.exceptions.map((e) => e.type);
		expect(types.length).toBe(502);
		expect(types.filter((t) => t === "ValueError").length).toBe(500);
		expect(outcome.exceptions.slice(500)).toEqual([
			{ type: "RuntimeError", message: "deep failure 6", line: at("E       RuntimeError: deep failure 6") },
			{
				type: "TypeError",
				message: "object of type 'int' has no len()",
				line: at("E       TypeError: object of type 'int' has no len()"),
			},
		]);
	});
});

describe("unittest", () => {
	it("names a test whose expected failure passed: the unexpected success fails the run", () => {
		// `python3.11 -m unittest -v` with one `@unittest.expectedFailure` test that passes.
		const text = lines(
			"test_ok (test_ut.TestA.test_ok) ... ok",
			"test_fixed (test_ut.TestA.test_fixed) ... unexpected success",
			"",
			"======================================================================",
			"UNEXPECTED SUCCESS: test_fixed (test_ut.TestA.test_fixed)",
			"----------------------------------------------------------------------",
			"Ran 2 tests in 0.001s",
			"",
			"FAILED (unexpected successes=1)",
		);
		for (const exitCode of [undefined, 1]) {
			const outcome = parseOutcome(text, { exitCode });
			expect(outcome.failingIds).toEqual(["test_fixed (test_ut.TestA.test_fixed)"]);
			expect(outcome.status).toBe("fail");
		}
	});
});

describe("interpreter crashes", () => {
	it("reads `Fatal Python error` as a crash of the run, also after pytest's progress on its line", () => {
		// pytest 9 running a test that calls os.abort(): the output stops inside the faulthandler dump.
		const text = lines(
			"collected 2 items",
			"",
			"tests/test_crash.py Fatal Python error: Aborted",
			"",
			"Current thread 0x00007fadcb886b80 (most recent call first):",
			'  File "/tmp/py2/tests/test_crash.py", line 2 in test_crash',
		);
		const outcome = parseOutcome(text);
		expect(outcome.status).toBe("fail");
		expect(outcome.exceptions).toEqual([{ type: "Fatal Python error", message: "Aborted", line: 3 }]);
		expect(parseOutcome("Fatal Python error: Segmentation fault").status).toBe("fail");
		// Prose that names it mid-sentence is not a crash.
		expect(parseOutcome(lines("see 'Fatal Python error:' in the docs", "1 passed in 0.01s")).status).toBe("pass");
	});
});

describe("qualified exception names", () => {
	it("reads a nested class and a class defined in a function as the exception's type", () => {
		// Python 3.11's traceback.print_exc() and pytest 9's `E` lines qualify the class by its __qualname__.
		const plain = parseOutcome(
			lines(
				"Traceback (most recent call last):",
				'  File "/tmp/py3/test_q.py", line 3, in test_nested_cls',
				'    def test_nested_cls(): raise Outer.InnerError("nested boom")',
				"Outer.InnerError: nested boom",
				"Traceback (most recent call last):",
				'  File "/tmp/py3/test_q.py", line 6, in test_local',
				'    raise LocalError("local boom")',
				"test_local.<locals>.LocalError: local boom",
			),
		);
		expect(plain.exceptions).toEqual([
			{ type: "Outer.InnerError", message: "nested boom", line: 4 },
			{ type: "test_local.<locals>.LocalError", message: "local boom", line: 8 },
		]);
		const pytest = parseOutcome(
			lines(
				"=================================== FAILURES ===================================",
				"__________________________________ test_local __________________________________",
				"E       test_q.test_local.<locals>.LocalError: local boom",
				"",
				"test_q.py:6: LocalError",
				"=========================== short test summary info ============================",
				"FAILED test_q.py::test_local - test_q.test_local.<locals>.LocalError: local boom",
				"1 failed in 0.05s",
			),
		);
		expect(pytest.exceptions).toEqual([
			{ type: "test_q.test_local.<locals>.LocalError", message: "local boom", line: 3 },
		]);
	});
});

describe("python -m doctest", () => {
	it("reads its verdict, counts and failing items", () => {
		// `python3.11 -m doctest -v mod.py`, tail: doctest prints no exit-status-free verdict other than these.
		const text = lines(
			"**********************************************************************",
			'File "/tmp/py2/mod.py", line 3, in mod.double',
			"Failed example:",
			"    double(2)",
			"Expected:",
			"    5",
			"Got:",
			"    4",
			"**********************************************************************",
			"1 items had failures:",
			"   1 of   2 in mod.double",
			"2 tests in 2 items.",
			"1 passed and 1 failed.",
			"***Test Failed*** 1 failures.",
		);
		const outcome = parseOutcome(text);
		expect(outcome.status).toBe("fail");
		expect(outcome.failingIds).toEqual(["mod.double"]);
		expect(outcome.counts).toEqual({ passed: 1, failed: 1 });
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["/tmp/py2/mod.py:3"]);
	});
});

describe("pytest 9 subtests", () => {
	it("names the test of a failed subtest, whose verdict line opens with its parameters", () => {
		// pytest 9.0 running a unittest TestCase whose subTest fails twice.
		const outcome = parseOutcome(
			lines(
				"=========================== short test summary info ============================",
				"SUBFAILED(i=2, label='a b') test_ut.py::TestA::test_sub - AssertionError: 2 n...",
				"SUBFAILED(i=3, label='a) b') test_ut.py::TestA::test_sub - AssertionError: 3 not less than 2",
				"FAILED test_ut.py::TestB::test_x - RuntimeError: setup exploded",
				"= 3 failed, 2 passed, 2 subtests passed in 1.03s =",
			),
		);
		expect(outcome.failingIds).toEqual(["test_ut.py::TestA::test_sub", "test_ut.py::TestB::test_x"]);
		expect(outcome.exceptions.map((e) => `${e.type}: ${e.message}`)).toEqual([
			"AssertionError: 2 n...",
			"AssertionError: 3 not less than 2",
			"RuntimeError: setup exploded",
		]);
	});
});

describe("pytest node ids of any file name", () => {
	it("keeps ids whose folders or file names hold spaces or letters of any script, and their exceptions", () => {
		const outcome = parseOutcome(
			lines(
				"my tests/test_sp ace.py::test_ok PASSED                             [ 33%]",
				"my tests/test_sp ace.py::test_bad FAILED                            [ 66%]",
				"tests/test_ünï.py::test_p[0] FAILED                                 [100%]",
				"=================================== FAILURES ===================================",
				"___________________________________ test_bad ___________________________________",
				">       assert 1 == 2",
				"E       assert 1 == 2",
				"",
				"my tests/test_sp ace.py:5: AssertionError",
				"=========================== short test summary info ============================",
				"FAILED my tests/test_sp ace.py::test_bad - assert 1 == 2",
				"FAILED tests/test_ünï.py::test_p[0] - assert 0 < 0",
				"FAILED my tests/test_s.py::test_q[a b] - ZeroDivisionError: zero",
				"ERROR my tests/conftest helpers/test_c.py - ImportError: no module",
				"========================= 4 failed, 1 passed in 0.12s ==========================",
			),
		);
		expect(outcome.failingIds).toEqual([
			"my tests/test_sp ace.py::test_bad",
			"tests/test_ünï.py::test_p[0]",
			"my tests/test_s.py::test_q[a b]",
			"my tests/conftest helpers/test_c.py",
			// The FAILURES section's header names test_bad again; the capsule drops this alias.
			"test_bad",
		]);
		expect(outcome.exceptions.map((e) => e.type)).toEqual(["AssertionError", "ZeroDivisionError", "ImportError"]);
	});

	it("reads no prose as a test file: a name with spaces needs a folder and a test part or message after it", () => {
		const outcome = parseOutcome(
			lines(
				"FAILED building the wheel for setup.py - see the log",
				"ERROR while reading config notes.md",
				"Error in handler.py:12: KeyError",
				"ERROR Missing file data/input files.txt",
				"ERROR could not load plugins/my plugin.py",
				"FAILED to import helpers/string utils.py",
				"ERROR reading config from /home/me/My Project/setup.py",
				"=================================== FAILURES ===================================",
				"see my notes/in the file.py:3: TODO",
			),
		);
		expect(outcome.failingIds).toEqual([]);
		expect(outcome.exceptions.map((e) => e.type)).toEqual([]);
	});
});
