import type { OutcomeCounts } from "../types.js";
import { startsWithText } from "./affixes.js";
import { isDigitCode, isUpperCode } from "./chars.js";
import { add } from "./counted.js";
import type { LineFamily, LineParser, ScanState } from "./state.js";
import { TitlePath } from "./title-path.js";

/** `FAIL  file > suite > test`, `FAIL src/x.test.ts`, `FAIL  file [ file ]`, uvu `FAIL  Suite  "test"`. */
const FAIL_HEADER = /^FAIL\s+(\S.*)$/;
const JEST_TEST = /^● (\S.*)$/;
const JEST_NOT_A_TEST =
	/^(?:Test suite failed to run|Console|Deprecation|Validation|Invalid|Unknown option|Multiple configurations)/;
const JEST_TOTALS = /^(Tests|Test Suites|Snapshots):\s+(.*)$/;
const VITEST_TOTALS = /^(Tests|Test Files)\s{2,}(.*)$/;
/** vitest's count of errors outside any test (unhandled rejections, uncaught exceptions): the run failed. */
const VITEST_ERRORS = /^Errors\s{2,}(\d+) errors?\b/;
const COUNTED_ITEM = /(\d+) (passed|failed|skipped|todo|pending|total)/g;
/**
 * A failure mark, a status tag the name does not hold (ava's `✘ [fail]: name`), the name, its time.
 * One space parts the name from its time (`✖ name (1.2ms)`, `× name 5ms`, `✕ name (5 ms)`): a name's
 * own trailing space stays part of it.
 */
const CROSS = /^[×✕✗✖✘] (?:\[[a-z]+(?: [a-z]+)*\]: )?(\S.*?)(?: \(?\d+(?:\.\d+)?\s?m?s\)?)?$/;
/** node's spec and dot reporters mark a todo test's failure `✖ name (1.2ms) # reason`: no failure of the run. */
const CROSS_TODO = /^✖ \S.*? \(\d+(?:\.\d+)?m?s\) # /;
/** node's reporters print this under a test or suite that failed only because its subtests did. */
const SUBTESTS_FAILED = /^'\d+ subtests? failed'$/;
const ESLINT_PROBLEMS = /^✖ \d+ problems?/;
const MOCHA_TALLY = /^(\d+) (passing|failing|pending)(?: \([\d.]+\s?m?s\))?$/;
const MOCHA_NUMBERED = /(?:^|\s)(\d+)\) (\S.*)$/;
const NODE_TALLY = /^(?:#|ℹ) (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/;
/**
 * `not ok 3 - name`, `not ok 3 name` (the dash is optional in TAP), then an optional directive after an
 * unescaped ` # ` (`# SKIP`, `# TODO`, or a reporter's `# time=1.2ms`), then ` {` when a subtest block opens.
 */
const TAP_NOT_OK = /^not ok \d+(?:\s+-)?(?:\s+(.*?))?(?:\s+#(?:\s+(.*?))?)?(\s+\{)?$/d;
const TAP_SKIPPED = /^(?:SKIP|TODO)\b/i;
/** TAP YAML of a group that failed only because its children did; the children carry the ids. */
const TAP_GROUP_FAILURE = /^(?:type: 'suite'|failureType: 'subtestsFailed')$/;
const SUITE_START = /^▶ (\S.*)$/;
/** node's spec reporter lists every failing test again at the end, by its own title, under this line. */
const NODE_FAILING_LIST = "✖ failing tests:";
/** Levels of a mocha title path read at most. */
const MOCHA_PATH_MAX = 16;
/** webpack's problem header: `ERROR in ./src/index.js 3:11`, `WARNING in ./src/a.js 2:0-17`. */
const WEBPACK_PROBLEM = /^(ERROR|WARNING) in (\S+) (\d+):(\d+)(?:-\d+(?::\d+)?)?$/;
/** webpack's verdict: `webpack 5.113.0 compiled with 1 error in 574 ms`, `... compiled successfully in 80 ms`. */
const WEBPACK_VERDICT = /^webpack [\d.]+ compiled (?:with (\d+) errors?|successfully)\b/;
/** rolldown and oxc (vite 7+) name an error by its code: `[PARSE_ERROR] Unexpected token`. */
const BUNDLER_CODE = /^\[([A-Z]+(?:_[A-Z]+)+)\] (\S.*)$/;
/** prettier --check's verdicts (npx prettier 3). */
const PRETTIER_ISSUES = /^\[warn\] Code style issues (?:found in (?:\d+ files|the above file)|were found)\b/;
const PRETTIER_CLEAN = "All matched files use Prettier code style!";
/** eslint's compact formatter: `/src/a.js: line 2, col 5, Error - 'a' is not defined. (no-undef)`. */
const ESLINT_COMPACT = /^(\S.*?): line (\d+), col (\d+), (Error|Warning) - (.*?)(?: \(([\w@/-]+)\))?$/;
/** eslint's unix formatter: `/src/a.js:2:5: 'a' is not defined. [Error/no-undef]`. */
const ESLINT_UNIX = /^\S.*?:\d+:\d+: (.*) \[(Error|Warning)(?:\/([\w@/-]+))?\]$/;
const SUITE_NAMES_MAX = 1000;
const UVU_TALLY = /^(Total|Passed|Skipped):\s+(\d+)$/;

/** jest, vitest, mocha, node's test runner (spec and TAP) and uvu. */
export function createJavascriptParser(state: ScanState): LineFamily {
	/** Mocha prints failure details after `N failing`: numbered title paths whose leaf ends with `:`. */
	let mochaDetails = false;
	/** The title path being read after a numbered failure header (mocha details), outermost level first. */
	let mochaPath: string[] | null = null;
	let mochaTitleIndent = 0;
	let jestFailFile: string | null = null;
	let nodeCounts: OutcomeCounts | null = null;
	let jestSuiteErrors = 0;
	let uvuCounts: OutcomeCounts | null = null;
	/** The last `not ok` id, until its YAML block ends; withdrawn if the block says it is a group. */
	let tapFailure: string | null = null;
	/** The last `✖ name` id, withdrawn if the next line says only that its subtests failed. */
	let crossId: string | null = null;
	/**
	 * Tests listed under the dot reporter's `Failed tests:` (null before it): the reporter prints no
	 * tally, so the list is its failure count.
	 */
	let dotFailures: number | null = null;
	/** Suites of node's spec reporter (`▶ name`); a suite's own `✖` line names no test. */
	const suiteNames = new Set<string>();
	/** The suites (node's `▶` headings) holding the current line: a failing test's id is its title path. */
	const suitePath = new TitlePath();
	/** In node's list of failing tests at the end of a spec run: each test there is named by its own title. */
	let nodeFailingList = false;

	const line: LineParser = (text, trimmed, lineNo) => {
		if (mochaPath !== null) {
			// Each level of the title path is indented deeper than the one before; the last level is the
			// test's own title, ending with a colon. The error message that follows is indented less.
			const indent = text.length - text.trimStart().length;
			if (trimmed !== "" && indent > mochaTitleIndent && mochaPath.length < MOCHA_PATH_MAX) {
				mochaPath.push(trimmed);
				mochaTitleIndent = indent;
				return true;
			}
			endTitle();
		}
		if (trimmed === "") return false;
		if (crossId !== null) {
			const group = SUBTESTS_FAILED.test(trimmed);
			if (group) {
				state.removeId(crossId);
				if (dotFailures !== null) countDotFailures(-1);
			}
			crossId = null;
			if (group) return true;
		}

		const first = trimmed.codePointAt(0) ?? 0;
		if (tapFailure !== null) {
			if (TAP_GROUP_FAILURE.test(trimmed)) {
				state.removeId(tapFailure);
				tapFailure = null;
				return true;
			}
			if (trimmed === "..." || /^(?:not )?ok \d/.test(trimmed)) tapFailure = null;
		}
		if (first === 0x25b6 /* ▶ */) {
			const suite = SUITE_START.exec(trimmed);
			if (suite === null) return false;
			if (suiteNames.size < SUITE_NAMES_MAX) suiteNames.add(suite[1]);
			suitePath.open(indentOf(text), suite[1]);
			nodeFailingList = false;
			return true;
		}
		if (first === 70 /* F */) {
			const fail = FAIL_HEADER.exec(trimmed);
			if (fail) return failHeader(fail[1], text);
			// node's dot reporter: a row of dots, then `Failed tests:` and one `✖ name (time)` per failure.
			if (trimmed === "Failed tests:" && text === trimmed) {
				// Failing todo tests are listed too (and not counted): the heading alone is no verdict.
				dotFailures = 0;
				state.summary(lineNo, "node-test", null);
				return true;
			}
		}
		if (first === 0x25cf /* ● */) {
			const test = JEST_TEST.exec(trimmed);
			if (test) {
				if (test[1].startsWith("Test suite failed to run")) {
					if (jestFailFile !== null) state.addId(jestFailFile, { needs: "jest", earlierLine: true });
					jestSuiteErrors++;
					state.hardFailure = true;
				} else if (!JEST_NOT_A_TEST.test(test[1])) {
					state.addId(test[1], { needs: "jest" });
				}
				return true;
			}
		}
		if (first === 0xd7 || first === 0x2715 || first === 0x2717 || first === 0x2716 || first === 0x2718) {
			if (ESLINT_PROBLEMS.test(trimmed)) return false;
			if (first === 0x2716 && CROSS_TODO.test(trimmed)) return true;
			if (trimmed === NODE_FAILING_LIST) nodeFailingList = true;
			const cross = CROSS.exec(trimmed);
			if (cross && !cross[1].endsWith(":")) {
				const indent = indentOf(text);
				// A suite's own result line (at its heading's indent, or naming a suite outside any) names no test.
				if (suitePath.closes(indent, cross[1])) return true;
				const suites = suitePath.titles();
				if (suites.length === 0 && suiteNames.has(cross[1])) return true;
				// node's spec reporter nests a test under its suites' headings: its id is the title path,
				// joined as node joins a test's `fullName`. A bare title is a leaf that a path may hold,
				// unless it is a top-level test of a nested run (not the list of failing tests at its end).
				const id = suites.length > 0 ? [...suites, cross[1]].join(" > ") : cross[1];
				const topLevel = suites.length === 0 && indent === 0 && suiteNames.size > 0 && !nodeFailingList;
				state.addId(id, { leaf: suites.length === 0 && !topLevel, needs: "js-test", marked: true, verbatim: true });
				crossId = id;
				if (dotFailures !== null && text === trimmed) countDotFailures(1);
				return true;
			}
		}
		if (first === 0x2139 /* ℹ */ || first === 35 /* # */) {
			const tally = NODE_TALLY.exec(trimmed);
			if (tally && text.startsWith(trimmed)) {
				const runner = first === 35 ? "tap" : "node-test";
				if (tally[1] === "tests") {
					nodeCounts = { total: Number(tally[2]) };
				} else if (nodeCounts !== null) {
					const value = Number(tally[2]);
					if (tally[1] === "pass") nodeCounts.passed = value;
					if (tally[1] === "fail") nodeCounts.failed = value;
					if (tally[1] === "skipped") nodeCounts.skipped = value;
					if (tally[1] === "todo") nodeCounts.todo = value;
					if (tally[1] === "cancelled" && value > 0) state.hardFailure = true;
				}
				if (nodeCounts !== null && (tally[1] === "pass" || tally[1] === "fail")) {
					state.setCounts(runner, nodeCounts, true);
					const done = nodeCounts.passed !== undefined && nodeCounts.failed !== undefined;
					if (done) {
						const failed = (nodeCounts.failed ?? 0) > 0;
						state.summary(lineNo, runner, failed ? false : (nodeCounts.passed ?? 0) > 0 ? true : null);
					}
				}
				return true;
			}
		}
		if (first === 110 /* n */ && startsWithText(trimmed, "not ok ")) {
			// An escaped `\#` belongs to the name: masked (same length) so that it opens no directive.
			const notOk = TAP_NOT_OK.exec(trimmed.replace(/\\#/g, "\\_"));
			if (notOk) {
				// A block (` {`) holds the subtests that carry the ids; a skipped or todo test is no failure.
				if (!notOk[3] && !TAP_SKIPPED.test(notOk[2] ?? "")) {
					const name = notOk.indices?.[1];
					tapFailure = name ? trimmed.slice(name[0], name[1]) : trimmed;
					state.addId(tapFailure, { needs: "tap", marked: true });
				}
				return true;
			}
		}
		if (trimmed === "TAP version 13" || trimmed === "TAP version 14") {
			state.sawRunner("tap");
			return true;
		}

		if (first >= 48 && first <= 57) {
			const tally = MOCHA_TALLY.exec(trimmed);
			if (tally) {
				const value = Number(tally[1]);
				if (tally[2] === "passing") state.setCounts("mocha", { passed: value }, true);
				else {
					const counts: OutcomeCounts = {};
					add(counts, tally[2], value);
					state.setCounts("mocha", counts, false);
				}
				if (tally[2] === "failing") mochaDetails = true;
				state.summary(lineNo, "mocha", tally[2] === "passing" ? true : tally[2] === "failing" ? false : null);
				return true;
			}
		}
		if (trimmed.includes(") ")) {
			const numbered = MOCHA_NUMBERED.exec(trimmed);
			if (numbered) {
				if (!mochaDetails) {
					// The progress line names a test by its own title: the details after `N failing` give its path.
					state.addId(numbered[2], { needs: "mocha", leaf: true });
				} else {
					mochaPath = [numbered[2]];
					// Mocha indents each level of the path after the first by 5 + 2 x level columns, whatever the
					// number's width (`  100) suite` puts the suite where the next level goes): a deeper level is
					// indented more than 4 columns past the number; the error message (5 columns) is not.
					mochaTitleIndent = text.trimEnd().length - numbered[2].length - 2 - numbered[1].length + 4;
				}
				return true;
			}
		}

		if (first === 84 /* T */ || first === 83 /* S */) {
			const jest = JEST_TOTALS.exec(trimmed);
			if (jest) {
				if (jest[1] === "Snapshots") return true;
				const counts = countsIn(jest[2]);
				if (jest[1] === "Tests") {
					if (jestSuiteErrors > 0) counts.errors = jestSuiteErrors;
					// The next run (another workspace's) counts its own.
					jestSuiteErrors = 0;
					state.setCounts("jest", counts, true);
				}
				const failed = (counts.failed ?? 0) > 0;
				const clean = jest[1] === "Tests" && !failed && (counts.passed ?? 0) > 0;
				state.summary(lineNo, "jest", failed ? false : clean ? true : null);
				return true;
			}
			const vitest = VITEST_TOTALS.exec(trimmed);
			if (vitest) {
				const counts = countsIn(vitest[2].replace(/\((\d+)\)\s*$/, "$1 total"));
				if (vitest[1] === "Tests") state.setCounts("vitest", counts, true);
				const failed = (counts.failed ?? 0) > 0;
				state.summary(
					lineNo,
					"vitest",
					failed ? false : vitest[1] === "Tests" && (counts.passed ?? 0) > 0 ? true : null,
				);
				return true;
			}
		}
		// The compact formatter's path holds no `: `: its position follows the line's first.
		const colonSpace = state.colonSpace();
		if (
			colonSpace > 0 &&
			trimmed.charCodeAt(colonSpace + 2) === 108 /* l */ &&
			trimmed.startsWith("line ", colonSpace + 2)
		) {
			const compact = ESLINT_COMPACT.exec(trimmed);
			if (compact) {
				state.addLocation(compact[1], Number(compact[2]), Number(compact[3]), lineNo);
				lintProblem(compact[4], compact[6], compact[5], lineNo);
				return true;
			}
		}
		const tag = unixTagAt(trimmed);
		if (tag > 0 && (trimmed.startsWith("Error", tag) || trimmed.startsWith("Warning", tag))) {
			const unix = ESLINT_UNIX.exec(trimmed);
			if (unix) {
				lintProblem(unix[2], unix[3], unix[1], lineNo);
				return true;
			}
		}
		if (startsWithText(trimmed, "ERROR in ") || startsWithText(trimmed, "WARNING in ")) {
			const webpack = WEBPACK_PROBLEM.exec(trimmed);
			if (webpack) {
				state.addLocation(webpack[2], Number(webpack[3]), Number(webpack[4]), lineNo);
				if (webpack[1] === "ERROR") state.softFailure(lineNo);
				return true;
			}
		}
		if (first === 119 /* w */ && startsWithText(trimmed, "webpack ")) {
			const verdict = WEBPACK_VERDICT.exec(trimmed);
			if (verdict) {
				state.summary(lineNo, "webpack", verdict[1] === undefined);
				return true;
			}
		}
		if (first === 91 /* [ */ && isUpperCode(trimmed.charCodeAt(1))) {
			const code = BUNDLER_CODE.exec(trimmed);
			if (code) {
				state.addException(code[1], code[2], lineNo);
				state.softFailure(lineNo);
				return true;
			}
		}
		if (first === 91 /* [ */ && startsWithText(trimmed, "[warn] Code style issues") && PRETTIER_ISSUES.test(trimmed)) {
			state.summary(lineNo, "prettier", false);
			return true;
		}
		if (first === 65 /* A */ && trimmed === PRETTIER_CLEAN) {
			state.summary(lineNo, "prettier", true);
			return true;
		}
		if (first === 69 /* E */ && startsWithText(trimmed, "Errors ")) {
			const errors = VITEST_ERRORS.exec(trimmed);
			if (errors) {
				const count = Number(errors[1]);
				if (state.counts !== null && state.runner === "vitest") state.setCounts("vitest", { errors: count }, false);
				state.summary(lineNo, "vitest", count > 0 ? false : null);
				return true;
			}
		}
		if (first === 84 || first === 80 || first === 83) {
			const uvu = UVU_TALLY.exec(trimmed);
			if (uvu) {
				if (uvu[1] === "Total") uvuCounts = { total: Number(uvu[2]) };
				else if (uvuCounts !== null) {
					if (uvu[1] === "Passed") uvuCounts.passed = Number(uvu[2]);
					if (uvu[1] === "Skipped") {
						uvuCounts.skipped = Number(uvu[2]);
						uvuCounts.failed = Math.max(0, (uvuCounts.total ?? 0) - (uvuCounts.passed ?? 0) - uvuCounts.skipped);
						state.setCounts("uvu", uvuCounts, true);
						state.summary(
							lineNo,
							"uvu",
							uvuCounts.failed === 0 && (uvuCounts.passed ?? 0) > 0 ? true : uvuCounts.failed > 0 ? false : null,
						);
					}
				}
				return true;
			}
		}
		if (first === 80 /* P */ && /^PASS\s+\S+\.[cm]?[jt]sx?(?:\s|$)/.test(trimmed)) {
			state.sawRunner("jest");
			return true;
		}
		return false;
	};
	// A mocha title path being read, a TAP failure's YAML block and a `✖` id read the lines that follow them.
	// `suiteNames` and `suitePath` change and matter only on the lines this parser claims (`▶` headings,
	// `✖` results), which are never found inert, so they are no part of the mode.
	const mode = () =>
		mochaPath !== null || tapFailure !== null || crossId !== null
			? -1
			: (mochaDetails ? 1 : 0) | (nodeFailingList ? 2 : 0);
	/**
	 * A title path ended (by a line indented less, or by the end of the output): its last level, ending
	 * with a colon, is the failing test's own title, and the whole path joined with spaces is its id, as
	 * mocha's `fullTitle()` joins it (its JSON reporter's id). It was read on an earlier line than the
	 * current one.
	 */
	function endTitle(): void {
		const path = mochaPath;
		mochaPath = null;
		const last = path?.[path.length - 1];
		if (path === null || last === undefined || !last.endsWith(":")) return;
		const title = last.slice(0, -1);
		path[path.length - 1] = title;
		state.addId(path.join(" "), { needs: "mocha", earlierLine: true, covers: title });
	}
	return { line, mode, end: endTitle };

	/** A test listed under the dot reporter's `Failed tests:` (+1), or one that turned out a suite (-1). */
	function countDotFailures(change: number): void {
		dotFailures = (dotFailures ?? 0) + change;
		state.setCounts("node-test", { failed: dotFailures }, true);
	}

	/** A linter's problem: its rule is the type; an error (not a warning) fails the run. */
	function lintProblem(severity: string, rule: string | undefined, message: string, lineNo: number): void {
		if (rule) state.addException(rule, message, lineNo);
		if (severity === "Error") state.hardFailure = true;
		state.sawRunner("eslint");
	}

	function failHeader(rest: string, text: string): boolean {
		// go: `FAIL	pkg	0.01s` belongs to the toolchain parser.
		if (/^\S+\s+[\d.]+s$/.test(rest) || rest === "") return false;
		const bracket = /^(\S+) \[ (.+) \]$/.exec(rest);
		if (bracket) {
			state.addId(bracket[1]);
			state.sawRunner("vitest");
			return true;
		}
		if (rest.includes(" > ")) {
			state.addId(rest.replace(/\s+\d+(?:\.\d+)?\s?m?s$/, ""));
			state.sawRunner("vitest");
			return true;
		}
		const quoted = /^(.*"[^"]*")/.exec(rest);
		if (quoted) {
			state.addId(quoted[1]);
			state.sawRunner("uvu");
			return true;
		}
		if (/^\S+\.[cm]?[jt]sx?$/.test(rest) && text.startsWith("FAIL ")) {
			jestFailFile = rest;
			state.sawRunner("jest");
			state.hardFailure = true;
			return true;
		}
		return false;
	}
}

function indentOf(text: string): number {
	return text.length - text.trimStart().length;
}

function countsIn(text: string): OutcomeCounts {
	const counts: OutcomeCounts = {};
	for (const match of text.matchAll(COUNTED_ITEM)) add(counts, match[2], Number(match[1]));
	return counts;
}

/**
 * Where the tag that ends an eslint unix formatter's line (` [Error/no-undef]`, ` [Warning]`) starts,
 * after its bracket, or -1: read back from the line's end over the rule's characters (`[\w@/-]`), so a
 * line that ends otherwise costs a character or two.
 */
function unixTagAt(trimmed: string): number {
	const end = trimmed.length - 1;
	if (trimmed.charCodeAt(end) !== 93 /* ] */) return -1;
	for (let at = end - 1; at > 0; at--) {
		const code = trimmed.charCodeAt(at);
		if (code === 91 /* [ */) return trimmed.charCodeAt(at - 1) === 32 ? at + 1 : -1;
		const ruleCode =
			isUpperCode(code) ||
			isDigitCode(code) ||
			(code >= 97 && code <= 122) ||
			code === 95 ||
			code === 64 ||
			code === 47 ||
			code === 45;
		if (!ruleCode) return -1;
	}
	return -1;
}
