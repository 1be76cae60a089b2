import { describe, expect, it } from "vitest";
import { parseOutcome } from "./index.js";

/** Lines of real outputs (jest 29, vitest 4, mocha 11, node 20's test runner), cut down. */
const lines = (...text: string[]) => text.join("\n");

describe("node's error property dumps", () => {
	it("read an error's code printed after it was read with that code as its tag as the same error", () => {
		const text = lines(
			"✖ same name (2.3ms)",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"  ",
			"  1 !== 2",
			"  ",
			"      at TestContext.<anonymous> (file:///work/a.test.mjs:2:34) {",
			"    generatedMessage: true,",
			"    code: 'ERR_ASSERTION',",
			"    actual: 1,",
			"  }",
			// A code with no error of that tag is an error of its own (an uncaught error object dump).
			"    code: 'ENOENT',",
		);
		expect(parseOutcome(text).exceptions.map((e) => e.type)).toEqual(["AssertionError [ERR_ASSERTION]", "ENOENT"]);
	});

	it("read a code listed before its error's name (node's TAP error dump) as that error's tag", () => {
		const text = lines(
			"TAP version 13",
			"not ok 1 - same name",
			"  ---",
			"  error: |-",
			"    Expected values to be strictly equal:",
			"  code: 'ERR_ASSERTION'",
			"  name: 'AssertionError'",
			"  expected: 2",
			"  ...",
			"1..1",
		);
		expect(parseOutcome(text).exceptions.map((e) => e.type)).toEqual(["AssertionError [ERR_ASSERTION]"]);
	});
});

describe("TAP results", () => {
	it("reads a `not ok` line without the optional dash (mocha's tap reporter)", () => {
		const text = lines(
			"1..4",
			"ok 1 Calc adds",
			"not ok 2 Calc adds wrong",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			'not ok 3 Hooked "before all" hook for "never runs"',
			"# tests 3",
			"# pass 1",
			"# fail 2",
		);
		for (const exitCode of [undefined, 1]) {
			const outcome = parseOutcome(text, { exitCode });
			expect(outcome.status).toBe("fail");
			expect(outcome.failingIds).toEqual(["Calc adds wrong", 'Hooked "before all" hook for "never runs"']);
		}
	});

	it("ends a name at its directive and lists no subtest block (vitest's tap and tap-flat)", () => {
		const text = lines(
			"TAP version 13",
			"1..3",
			"not ok 1 - test/lib.test.ts # time=23.64ms {",
			"    1..2",
			"    not ok 1 - lib # time=18.95ms {",
			"        ok 1 - adds # time=0.5ms",
			"        not ok 2 - adds wrong # time=8.89ms",
			"            ---",
			"            error:",
			'                name: "AssertionError"',
			"            ...",
			"        not ok 3 - todo later # TODO not written",
			"        not ok 4 - has \\# in its name # time=1ms",
			"    }",
			"}",
			"not ok 2 - test/lib.test.ts > each 50% -> 3 # time=1.12ms",
			"not ok 3 - test/syntax.test.ts",
		);
		expect(parseOutcome(text).failingIds).toEqual([
			"adds wrong",
			"has \\# in its name",
			"test/lib.test.ts > each 50% -> 3",
			"test/syntax.test.ts",
		]);
	});
});

describe("mocha", () => {
	it("reads the title path of failure 100 and later, whose number is as wide as the first level", () => {
		const text = lines(
			"  2217 passing (187ms)",
			"  190 failing",
			"",
			"  99) group 20",
			"       case 12 of group 20:",
			"",
			"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"      at Context.<anonymous> (test/big.spec.js:3:111)",
			"",
			"  100) group 20",
			"       case 25 of group 20:",
			"",
			"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"  1000) group 30",
			"       nested",
			"         case 1:",
			"     TypeError: Cannot read properties of null (reading 'x')",
			"      at Context.<anonymous> (test/a.spec.js:5:46)",
		);
		expect(parseOutcome(text).failingIds).toEqual([
			"group 20 case 12 of group 20",
			"group 20 case 25 of group 20",
			"group 30 nested case 1",
		]);
	});

	it("names each failing test by its whole title path, joined as mocha's fullTitle joins it", () => {
		// jshttp/mime-types, mocha 10 spec reporter: one title fails in two groups.
		const text = lines(
			"  mimeTypes",
			"    .lookup(extension)",
			"      1) should be case insensitive",
			"    .lookup(path)",
			"      2) should be case insensitive",
			"      path with dotfile",
			"        3) should return false when extension-less",
			"",
			"  44 passing (95ms)",
			"  3 failing",
			"",
			"  1) mimeTypes",
			"       .lookup(extension)",
			"         should be case insensitive:",
			"     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"      at Context.<anonymous> (test/test.js:177:14)",
			"",
			"  2) mimeTypes",
			"       .lookup(path)",
			"         should be case insensitive:",
			"     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"  3) mimeTypes",
			"       .lookup(path)",
			"         path with dotfile",
			"           should return false when extension-less:",
			"     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
		);
		const outcome = parseOutcome(text);
		expect(outcome.failingIds).toEqual([
			"mimeTypes .lookup(extension) should be case insensitive",
			"mimeTypes .lookup(path) should be case insensitive",
			"mimeTypes .lookup(path) path with dotfile should return false when extension-less",
		]);
		expect(outcome.counts?.failed).toBe(3);
	});

	it("keeps a top-level test whose title a nested failing test ends with", () => {
		const text = lines(
			"  1) works",
			"  suite",
			"    2) works",
			"",
			"  0 passing (3ms)",
			"  2 failing",
			"",
			"  1) works:",
			"     Error: top",
			"",
			"  2) suite",
			"       works:",
			"     Error: nested",
		);
		expect(parseOutcome(text).failingIds).toEqual(["works", "suite works"]);
	});

	it("takes a message that follows a one-level title at once for no level of its path", () => {
		const text = lines(
			"  1 passing (6ms)",
			"  1 failing",
			"",
			"  1) adds wrong:",
			"     TypeError: Cannot read properties of null (reading 'x')",
			"      at Context.<anonymous> (test/a.spec.js:5:46)",
		);
		expect(parseOutcome(text).failingIds).toEqual(["adds wrong"]);
	});
});

describe("coverage gates", () => {
	it("fail a run whose tests all passed, with or without the exit status", () => {
		const jest = lines(
			"PASS __tests__/ok.test.js",
			"  ✓ adds 0 (9 ms)",
			'Jest: "global" coverage threshold for branches (90%) not met: 0%',
			"Test Suites: 1 passed, 1 total",
			"Tests:       5 passed, 5 total",
		);
		const nyc = lines("  5 passing (12ms)", "", "ERROR: Coverage for lines (50%) does not meet global threshold (95%)");
		for (const text of [jest, nyc]) {
			for (const exitCode of [undefined, 1]) expect(parseOutcome(text, { exitCode }).status).toBe("fail");
		}
	});

	it("leave prose about coverage alone", () => {
		const text = lines("Coverage threshold settings are read from jest.config.js", "Tests:       5 passed, 5 total");
		expect(parseOutcome(text).status).toBe("pass");
	});
});

describe("node's test runner", () => {
	it("lists no todo test and no test or suite that failed only through its subtests (dot reporter)", () => {
		const text = lines(
			"..X.X",
			"Failed tests:",
			"",
			"✖ adds wrong (1.447646ms)",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"✖ todo thing (0.277045ms) # later",
			"  AssertionError [ERR_ASSERTION]: not yet",
			"✖ math (4.680687ms)",
			"  '1 subtest failed'",
			"✖ with hook (3.688947ms)",
			"  Error: before failed",
			"✖ child fails & <x> (0.156838ms)",
			"  TypeError [Error]: bad child",
			"      at TestContext.<anonymous> (file:///tmp/nodep/a.test.mjs:15:51)",
			"✖ group 0 (17.691826ms)",
			"  '5 subtests failed'",
		);
		const outcome = parseOutcome(text, { exitCode: 1 });
		expect(outcome.failingIds).toEqual(["adds wrong", "with hook", "child fails & <x>"]);
		expect(outcome.exceptions.map((e) => `${e.type}: ${e.message}`)).toEqual([
			"AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"AssertionError [ERR_ASSERTION]: not yet",
			"Error: before failed",
			"TypeError [Error]: bad child",
		]);
	});

	it("names a test of a nested spec run by its suites' titles and its own, as node joins its fullName", () => {
		// jshttp/mime-types under node 20's spec reporter: one title fails in two suites, and the list
		// of failing tests at the end names each by its own title only.
		const text = lines(
			"▶ mimeTypes",
			"  ▶ .lookup(extension)",
			"    ✔ should work without the leading dot (0.08ms)",
			"    ✖ should be case insensitive (0.4ms)",
			"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"  ✖ .lookup(extension) (1.2ms)",
			"  ▶ .lookup(path)",
			"    ✖ should be case insensitive (0.3ms)",
			"      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"    ▶ path with dotfile",
			"      ✖ should return false when extension-less (0.2ms)",
			"        AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"    ✖ path with dotfile (0.5ms)",
			"  ✖ .lookup(path) (1.5ms)",
			"  ✔ extension conflicts (0.1ms)",
			"✖ mimeTypes (3.1ms)",
			"✖ exports its version (0.2ms)",
			"  Error: no version",
			"ℹ tests 5",
			"ℹ suites 4",
			"ℹ pass 1",
			"ℹ fail 4",
			"",
			"✖ failing tests:",
			"",
			"test at test/test.js:176:5",
			"✖ should be case insensitive (0.4ms)",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"test at test/test.js:212:5",
			"✖ should be case insensitive (0.3ms)",
			"  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
			"",
			"test at test/test.js:223:7",
			"✖ should return false when extension-less (0.2ms)",
			"",
			"test at test/test.js:250:1",
			"✖ exports its version (0.2ms)",
			"  Error: no version",
		);
		const outcome = parseOutcome(text, { exitCode: 1 });
		expect(outcome.failingIds).toEqual([
			"mimeTypes > .lookup(extension) > should be case insensitive",
			"mimeTypes > .lookup(path) > should be case insensitive",
			"mimeTypes > .lookup(path) > path with dotfile > should return false when extension-less",
			"exports its version",
		]);
		expect(outcome.counts?.failed).toBe(4);
	});

	it("keeps a top-level test of a nested spec run whose title a nested failing test ends with", () => {
		const text = lines(
			"▶ suite",
			"  ✖ works (0.3ms)",
			"    Error: nested",
			"✖ suite (0.9ms)",
			"✖ works (0.2ms)",
			"  Error: top",
			"ℹ fail 2",
			"✖ failing tests:",
			"✖ works (0.3ms)",
			"✖ works (0.2ms)",
		);
		expect(parseOutcome(text, { exitCode: 1 }).failingIds).toEqual(["suite > works", "works"]);
	});

	it("reads an error's name quoted either way in TAP YAML (vitest quotes with double quotes)", () => {
		const text = lines(
			"TAP version 13",
			"not ok 1 - parses junk # time=1.53ms",
			"    ---",
			"    error:",
			'        name: "TypeError"',
			'        message: "not a number: x"',
			"    ...",
			"not ok 2 - throws # time=1ms",
			"    ---",
			"    error:",
			'        name: "Error"',
			"    ...",
		);
		expect(parseOutcome(text).exceptions.map((e) => e.type)).toEqual(["TypeError", "Error"]);
	});
});

describe("vitest", () => {
	it("fails a run whose tests passed but whose errors line counts an unhandled error", () => {
		const text = lines(
			"⎯⎯⎯⎯⎯ Uncaught Exception ⎯⎯⎯⎯⎯",
			"RangeError: late boom",
			" ❯ Timeout._onTimeout test/ok.test.ts:4:48",
			"",
			" Test Files  1 passed (1)",
			"      Tests  7 passed (7)",
			"     Errors  1 error",
		);
		for (const exitCode of [undefined, 1]) {
			const outcome = parseOutcome(text, { exitCode });
			expect(outcome.status).toBe("fail");
			expect(outcome.counts).toEqual({ passed: 7, total: 7, errors: 1 });
		}
	});
});

describe("parser errors", () => {
	it("locate a SyntaxError whose message opens with the file and ends with the position (babel under jest)", () => {
		const text = lines(
			"FAIL __tests__/broken.test.js",
			"  ● Test suite failed to run",
			"",
			'    SyntaxError: /tmp/jestp/__tests__/broken.test.js: Unexpected token, expected "," (4:0)',
		);
		const outcome = parseOutcome(text);
		expect(outcome.locations).toEqual([{ file: "/tmp/jestp/__tests__/broken.test.js", line: 4, column: 0, at: 4 }]);
	});
});

describe("eslint's compact and unix formatters and prettier --check", () => {
	it("read each problem's place and rule, and fail on an error without the exit status", () => {
		const compact = lines(
			"/app/src/file0.js: line 1, col 5, Error - 'unused0' is assigned a value but never used. (no-unused-vars)",
			"/app/src/file0.js: line 2, col 8, Warning - Expected '===' and instead saw '=='. (eqeqeq)",
			"",
			"2 problems",
		);
		const unix = lines(
			"/app/src/file0.js:1:5: 'unused0' is assigned a value but never used. [Error/no-unused-vars]",
			"/app/src/file0.js:2:8: Expected '===' and instead saw '=='. [Warning/eqeqeq]",
			"",
			"2 problems",
		);
		for (const text of [compact, unix]) {
			const outcome = parseOutcome(text);
			expect(outcome.status).toBe("fail");
			expect(outcome.exceptions.map((e) => e.type)).toEqual(["no-unused-vars", "eqeqeq"]);
			expect(outcome.locations.map((l) => `${l.file}:${l.line}:${l.column}`)).toEqual([
				"/app/src/file0.js:1:5",
				"/app/src/file0.js:2:8",
			]);
		}
	});

	it("does not fail on warnings alone", () => {
		const text = "/app/src/a.js: line 2, col 8, Warning - Expected '===' and instead saw '=='. (eqeqeq)";
		expect(parseOutcome(text, { exitCode: 0 }).status).not.toBe("fail");
	});

	it("reads prettier's verdicts", () => {
		const many = lines(
			"Checking formatting...",
			"[warn] src/a.js",
			"[warn] Code style issues found in 41 files. Run Prettier with --write to fix.",
		);
		const one = lines(
			"Checking formatting...",
			"[warn] src/pretty.js",
			"[warn] Code style issues found in the above file. Run Prettier with --write to fix.",
		);
		expect(parseOutcome(many).status).toBe("fail");
		expect(parseOutcome(one).status).toBe("fail");
		expect(parseOutcome(lines("Checking formatting...", "All matched files use Prettier code style!")).status).toBe(
			"pass",
		);
	});
});

describe("ava", () => {
	it("lists each `✘ [fail]:` test and keeps its tally printed one count a line", () => {
		const text = lines(
			"  ✘ [fail]: b › before hook Error thrown in test",
			"  - [todo] a › write later",
			"  ✔ a › adds (143ms)",
			"  ✘ [fail]: a › adds wrong",
			"  ✔ [expected fail] a › known bug",
			"  ─",
			"",
			"  1 hook failed",
			"  2 tests failed",
			"  1 known failure",
			"  1 test todo",
		);
		for (const exitCode of [undefined, 1]) {
			const outcome = parseOutcome(text, { exitCode });
			expect(outcome.status).toBe("fail");
			expect(outcome.failingIds).toEqual(["b › before hook Error thrown in test", "a › adds wrong"]);
			expect(outcome.counts).toEqual({ failed: 2, todo: 1 });
		}
	});
});

describe("bundlers", () => {
	it("read webpack's problem headers and verdict", () => {
		const failed = lines(
			"./src/index.js 47 bytes [built] [code generated]",
			"",
			"ERROR in ./src/index.js 2:15-16",
			"export 'x' (imported as 'x') was not found in './ok.js' (possible exports: ok)",
			"",
			"webpack 5.113.0 compiled with 1 error in 263 ms",
		);
		const outcome = parseOutcome(failed);
		expect(outcome.status).toBe("fail");
		expect(outcome.locations).toEqual([{ file: "./src/index.js", line: 2, column: 15, at: 3 }]);
		expect(parseOutcome("webpack 5.113.0 compiled successfully in 255 ms").status).toBe("pass");
	});

	it("read rolldown's error code as the error's type (vite build)", () => {
		const text = lines(
			"✗ Build failed in 105ms",
			"error during build:",
			"Build failed with 1 error:",
			"",
			"[PARSE_ERROR] Unexpected token",
			"   ╭─[ src/index.js:3:12 ]",
		);
		const outcome = parseOutcome(text);
		expect(outcome.exceptions.map((e) => `${e.type}: ${e.message}`)).toEqual(["PARSE_ERROR: Unexpected token"]);
		expect(outcome.locations.map((l) => `${l.file}:${l.line}`)).toEqual(["src/index.js:3"]);
		expect(parseOutcome("[INFO] BUILD SUCCESS").exceptions).toEqual([]);
	});
});

describe("a failing name's own spaces", () => {
	it("keeps the trailing space of a name its time follows: one space parts them", () => {
		const outcome = parseOutcome(
			lines(
				"✖ trailing space  (13.114332ms)",
				"✖ plain name (0.5ms)",
				"  × src/a.test.ts > two spaces at the end   12ms",
				"✕ jest title  (5 ms)",
				"ℹ tests 4",
				"ℹ fail 4",
			),
		);
		expect(outcome.failingIds).toEqual([
			"trailing space ",
			"plain name",
			"src/a.test.ts > two spaces at the end  ",
			"jest title ",
		]);
	});
});
