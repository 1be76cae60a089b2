import type { OutcomeCounts } from "../types.js";
import { endsWithText, startsWithText } from "./affixes.js";
import { isDigitCode, isUpperCode } from "./chars.js";
import type { LineFamily, LineParser, ScanState } from "./state.js";

const TSC_PAREN = /^(\S.*?)\((\d+),(\d+)\): error (TS\d+): (.*)$/;
const TSC_PRETTY = /^(\S.*?):(\d+):(\d+) - error (TS\d+): (.*)$/;
const FOUND_ERRORS = /^Found (\d+) errors?\b/;
const ESLINT_FILE = /^(?:[A-Za-z]:)?[\w./\\@~+-]*[\w-]\.[A-Za-z]\w{0,9}$/;
const ESLINT_ROW = /^\s+(\d+):(\d+)\s+(error|warning)\s+(.*?)(?:\s{2,}(@?[\w/-]+))?$/;
const ESLINT_SUMMARY = /^✖ (\d+) problems? \((\d+) errors?, (\d+) warnings?\)$/;
/** cargo's build verdict: `Finished \`dev\` profile [unoptimized + debuginfo] target(s) in 0.52s`. */
const CARGO_FINISHED = /^Finished (?:`\w+` profile |\w+ )?\[?[\w +-]*\]? target\(s\) in [\d.]+/;
const RUST_ERROR = /^error\[(E\d{4})\]: (.*)$/;
/** rustc's `--message-format=short`: `src/lib.rs:1:30: error[E0308]: mismatched types: expected ...`. */
const RUST_SHORT_ERROR = /^\S+?:\d+:\d+: error\[(E\d{4})\]: (.*)$/;
/**
 * `test tests::x ... FAILED`; libtest names a test's mode after it (`test x - should panic ... FAILED`),
 * and with --nocapture a panic's output may land between the dots and the verdict's spaces.
 */
const CARGO_TEST_FAILED = /^test (\S.*?)(?: - (?:should panic|compile fail|compile))? \.\.\.\s+FAILED$/;
/** A name in the list libtest prints under `failures:` before its result: four spaces, then the name. */
const CARGO_LISTED = /^ {4}(\S.*)$/;
const CARGO_QUIET_FAILED = /^(\S+) --- FAILED$/;
/** cargo's note that a test binary died of a signal (an abort, a stack overflow, a segfault). */
const CARGO_SIGNAL = /^process didn't exit successfully: .*\(signal: \d+, (SIG[A-Z]+)(?:: (.*?))?\)$/;
const CARGO_STDOUT = /^---- (\S.*?) stdout ----$/;
const CARGO_RESULT =
	/^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out/;
const PANIC = /^thread '([^']*)'(?: \(\d+\))? panicked at (?:'(.*)', )?(\S+?):(\d+):(\d+):?(?: (.*))?$/;
const GO_FAIL_TEST = /^\s*--- FAIL: (\S+)/;
const GO_PACKAGE = /^(ok|FAIL)\s+(\S+)\s+(?:[\d.]+s|\(cached\))/;
const MAVEN_TOTALS =
	/^\[(?:INFO|ERROR|WARNING)\] Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)(.*)$/;
const MAVEN_SECTION = /^\[ERROR\] (?:Failed tests|Failures|Errors|Tests in error):\s*$/;
const MAVEN_ID = /^\[ERROR\]\s{2,}(?:Run \d+: )?([\w$.]+[.#][\w$]+(?:\([\w$.]+\))?)(?::\d+)?/;
/**
 * A test that ran more than once (a JUnit 5 dynamic or repeated test, a flaky rerun) heads its runs in
 * the results: `[ERROR] demo.ManyTest.many`, then `[ERROR]   Run 1: ...` and `[INFO]   Run 2: PASS`.
 */
const MAVEN_RUNS_HEAD = /^\[ERROR\] ([\w$]+(?:\.[\w$]+)+)$/;
const MAVEN_RUN = /^\[(?:ERROR|INFO|WARNING)\]\s{2,}Run \d+: /;
/**
 * A failing case: surefire 2 `[ERROR] testSum(com.example.AppTest)  Time elapsed: ...`, surefire 3
 * `[ERROR] demo.CalcTest.param(int)[2] -- Time elapsed: 0.011 s <<< FAILURE!`.
 */
const MAVEN_CASE =
	/^\[ERROR\] ([\w$.]+(?:\([\w$., ]*\))?(?:\[\d+\])?)\s+(?:-- )?Time elapsed: .*<<< (?:FAILURE|ERROR)!/;
const GRADLE_TEST = /^(\S.*? > \S.*?) FAILED$/;
const GRADLE_TOTALS = /^(\d+) tests? completed, (\d+) failed(?:, (\d+) skipped)?$/;
const MYPY_ERROR = /^(\S+?):(\d+)(?::(\d+))?: error: (.*?)(?:\s{2}\[([\w-]+)\])?$/;
const TRAILING_CODE = /\s{2}\[([a-z][\w-]*)\]$/;
/** mypy --pretty wraps a long message: its code may stand alone on the next line, `[operator]`. */
const ALONE_CODE = /^\[([a-z][\w-]*)\]$/;
/**
 * A linter's diagnostic with a rule code after its position (flake8, pylint, ruff's concise format):
 * `pkg/a.py:1:8: F401 'os' imported but unused`, `pkg/a.py:8:0: W0311: Bad indentation...`.
 */
const LINT_CODE = /^(\S+?):(\d+):(\d+): ([A-Z]{1,6}\d{2,4}):? (\S.*)$/;
/** black/ruff format --check: `60 files would be reformatted, 2 files would be left unchanged.` */
const FORMAT_CHECK =
	/^\d+ files? would be (reformatted|left unchanged)(?:, \d+ files? would be left unchanged)?(, \d+ files? would fail to reformat)?\.?$/;
const RUFF_CODE = /^([A-Z]{1,4}\d{3,4}) (\S.*)$/;
const NPM_CODE = /^npm (?:ERR!|error) code (\S+)$/;

/** tsc, eslint, cargo and rustc, go test, maven, gradle, mypy, ruff and npm. */
export function createToolchainParser(state: ScanState): LineFamily {
	let eslintFile: string | null = null;
	let mavenIds = false;
	/** On the runs under a `MAVEN_RUNS_HEAD`: they are that test's, not tests of their own. */
	let mavenRuns = false;
	/** A mypy error whose code was not on its line: its message, for the code on the next line. */
	let mypyOpen: string | null = null;
	/** Right after libtest's `failures:` line, or on the names listed under it. */
	let cargoList = false;
	/** A panic whose message is on the next line (Rust 1.73+: `thread 'x' panicked at src/a.rs:3:5:`). */
	let panicOpen: { thread: string; line: number } | null = null;
	const closePanic = (message: string | null) => {
		if (panicOpen === null) return;
		const { thread, line } = panicOpen;
		panicOpen = null;
		state.addException("panic", message ?? `thread '${thread}' panicked`, message === null ? line : line + 1);
	};
	let ruffPending: { code: string; message: string; line: number } | null = null;

	const line: LineParser = (text, trimmed, lineNo) => {
		const pendingRuff = ruffPending;
		ruffPending = null;
		// The line after a panic is its message, unless the panic printed none; the line is still read as
		// any other.
		if (panicOpen !== null) closePanic(trimmed === "" ? null : trimmed);
		if (trimmed === "") {
			eslintFile = null;
			mavenIds = false;
			mavenRuns = false;
			cargoList = false;
			return false;
		}
		if (cargoList) {
			const listed = CARGO_LISTED.exec(text);
			if (listed) {
				state.addId(listed[1], { needs: "cargo" });
				return true;
			}
			cargoList = false;
		}
		if (text === "failures:") {
			cargoList = true;
			return true;
		}
		if (pendingRuff && startsWithText(trimmed, "--> ")) {
			state.addException(pendingRuff.code, pendingRuff.message, pendingRuff.line);
			state.hardFailure = true;
		}
		const first = trimmed.charCodeAt(0);

		if (mypyOpen !== null) {
			const message = mypyOpen;
			mypyOpen = null;
			const code = TRAILING_CODE.exec(trimmed) ?? ALONE_CODE.exec(trimmed);
			if (code) {
				const rest = code.index > 0 ? trimmed.slice(0, code.index).trim() : "";
				state.addException(code[1], rest === "" ? message : `${message} ${rest}`, lineNo);
				return true;
			}
		}

		// A two-character search first: `e` is so common that searching for `error TS` itself costs twice as much.
		if (trimmed.includes("TS") && trimmed.includes("error TS")) {
			const tsc = TSC_PAREN.exec(trimmed) ?? TSC_PRETTY.exec(trimmed);
			if (tsc) {
				state.addException(tsc[4], tsc[5], lineNo);
				state.addLocation(tsc[1], Number(tsc[2]), Number(tsc[3]), lineNo);
				state.sawRunner("tsc");
				state.hardFailure = true;
				return true;
			}
		}
		if (first === 70 /* F */) {
			const found = FOUND_ERRORS.exec(trimmed);
			if (found) {
				const runner = state.isConfirmed("tsc") ? "tsc" : "generic";
				state.summary(lineNo, runner, Number(found[1]) === 0);
				return true;
			}
		}

		if (eslintFile !== null) {
			const row = ESLINT_ROW.exec(text);
			if (row) {
				state.addLocation(eslintFile, Number(row[1]), Number(row[2]), lineNo);
				if (row[5]) state.addException(row[5], row[4], lineNo);
				if (row[3] === "error") state.hardFailure = true;
				state.sawRunner("eslint");
				return true;
			}
		}
		// A file header is one path with no spaces: most lines are ruled out before the pattern runs.
		if (text === trimmed && !trimmed.includes(" ") && ESLINT_FILE.test(trimmed) && /[\\/]/.test(trimmed)) {
			eslintFile = trimmed;
			return false;
		}
		if (first === 0x2716 /* ✖ */) {
			const eslint = ESLINT_SUMMARY.exec(trimmed);
			if (eslint) {
				state.summary(lineNo, "eslint", Number(eslint[2]) === 0 ? null : false);
				return true;
			}
		}

		if (first === 70 /* F */ && trimmed.startsWith("Finished ") && CARGO_FINISHED.test(trimmed)) {
			state.summary(lineNo, "cargo", true);
			return true;
		}
		if (first === 101 /* e */ && trimmed.startsWith("error[")) {
			const rust = RUST_ERROR.exec(trimmed);
			if (rust) {
				state.addException(rust[1], rust[2], lineNo);
				state.hardFailure = true;
				return true;
			}
		}
		// cargo's test lines open with `test `, a panic with `thread '`: most lines starting with `t` are neither.
		if (first === 116 /* t */ && (trimmed.startsWith("test ") || trimmed.startsWith("thread '"))) {
			const result = CARGO_RESULT.exec(trimmed);
			if (result) {
				const counts: OutcomeCounts = {
					passed: Number(result[2]),
					failed: Number(result[3]),
					skipped: Number(result[4]),
				};
				state.addCounts("cargo", counts);
				state.summary(lineNo, "cargo", result[1] === "ok" && counts.failed === 0);
				return true;
			}
			const test = CARGO_TEST_FAILED.exec(trimmed);
			if (test) {
				state.addId(test[1]);
				state.sawRunner("cargo");
				return true;
			}
			const panic = PANIC.exec(trimmed);
			if (panic) {
				const message = panic[2] ?? panic[6];
				if (message !== undefined) state.addException("panic", message, lineNo);
				else if (trimmed.endsWith(":")) panicOpen = { thread: panic[1], line: lineNo };
				else state.addException("panic", `thread '${panic[1]}' panicked`, lineNo);
				state.addLocation(panic[3], Number(panic[4]), Number(panic[5]), lineNo);
				state.softFailure(lineNo);
				return true;
			}
		}
		if (first === 45 /* - */) {
			const stdout = CARGO_STDOUT.exec(trimmed);
			if (stdout) {
				state.addId(stdout[1], { needs: "cargo" });
				return true;
			}
			const go = GO_FAIL_TEST.exec(text);
			if (go) {
				state.addId(go[1]);
				state.sawRunner("go");
				return true;
			}
		}
		if (first === 112 /* p */ && trimmed.startsWith("process didn't exit successfully: ")) {
			const signal = CARGO_SIGNAL.exec(trimmed);
			if (signal) {
				state.addException(signal[1], signal[2] ?? "", lineNo);
				state.hardFailure = true;
				return true;
			}
		}
		if (endsWithText(trimmed, "--- FAILED")) {
			const quiet = CARGO_QUIET_FAILED.exec(trimmed);
			if (quiet) {
				state.addId(quiet[1], { needs: "cargo" });
				return true;
			}
		}
		if (first === 111 /* o */ || first === 70 /* F */) {
			const go = GO_PACKAGE.exec(trimmed);
			if (go) {
				state.summary(lineNo, "go", go[1] === "ok");
				return true;
			}
		}
		if (trimmed === "FAIL" || trimmed === "PASS") {
			if (trimmed === "FAIL") state.hardFailure = true;
			state.sawRunner("go");
			return true;
		}

		if (first === 91 /* [ */) {
			const totals = MAVEN_TOTALS.exec(trimmed);
			if (totals) {
				const [total, failed, errors, skipped] = totals.slice(1, 5).map(Number);
				const counts: OutcomeCounts = { total, failed, errors, skipped, passed: total - failed - errors - skipped };
				// Per-class lines carry `Time elapsed`; the run's totals do not.
				const perClass = totals[5].includes("Time elapsed");
				if (failed + errors > 0) state.hardFailure = true;
				if (!perClass) {
					state.setCounts("maven", counts, true);
					state.summary(lineNo, "maven", failed + errors > 0 ? false : null);
				}
				return true;
			}
			if (MAVEN_SECTION.test(trimmed)) {
				mavenIds = true;
				return true;
			}
			if (mavenIds) {
				if (mavenRuns && MAVEN_RUN.test(trimmed)) return true;
				mavenRuns = false;
				const head = MAVEN_RUNS_HEAD.exec(trimmed);
				const id = head ?? MAVEN_ID.exec(trimmed);
				if (id) {
					state.addId(id[1]);
					mavenRuns = head !== null;
					return true;
				}
				mavenIds = false;
			}
			const testCase = MAVEN_CASE.exec(trimmed);
			if (testCase) {
				state.addId(testCase[1]);
				return true;
			}
			if (/^\[(?:INFO|ERROR)\] BUILD (SUCCESS|FAILURE)$/.test(trimmed)) {
				state.summary(lineNo, "maven", trimmed.endsWith("SUCCESS"));
				return true;
			}
		}
		if (startsWithText(trimmed, "BUILD ")) {
			if (trimmed === "BUILD FAILED" || /^BUILD FAILED in /.test(trimmed)) {
				state.summary(lineNo, "gradle", false);
				return true;
			}
			if (/^BUILD SUCCESSFUL(?: in .*)?$/.test(trimmed)) {
				state.summary(lineNo, "gradle", true);
				return true;
			}
			if (trimmed === "BUILD FAILURE" || trimmed === "BUILD SUCCESS") {
				state.summary(lineNo, "maven", trimmed === "BUILD SUCCESS");
				return true;
			}
		}
		if (endsWithText(trimmed, " FAILED") && trimmed.includes(" > ")) {
			const gradle = GRADLE_TEST.exec(trimmed);
			if (gradle) {
				state.addId(gradle[1]);
				state.sawRunner("gradle");
				return true;
			}
		}
		if (first >= 48 && first <= 57) {
			const gradle = GRADLE_TOTALS.exec(trimmed);
			if (gradle) {
				const [total, failed] = [Number(gradle[1]), Number(gradle[2])];
				const skipped = gradle[3] ? Number(gradle[3]) : 0;
				const counts: OutcomeCounts = { total, failed, skipped, passed: total - failed - skipped };
				state.setCounts("gradle", counts, true);
				state.summary(lineNo, "gradle", counts.failed === 0 ? null : false);
				return true;
			}
		}

		// rustc's short form, mypy and the linters open with `path:line[:col]: `, with no space before it:
		// their `: ` is the line's first.
		const colonSpace = state.colonSpace();
		const afterColon = colonSpace > 0 ? trimmed.charCodeAt(colonSpace + 2) : 0;
		if (afterColon === 101 /* e */ && trimmed.startsWith("error[E", colonSpace + 2)) {
			const rust = RUST_SHORT_ERROR.exec(trimmed);
			if (rust) {
				state.addException(rust[1], rust[2], lineNo);
				state.hardFailure = true;
				return true;
			}
		}
		if (afterColon === 101 /* e */ && trimmed.startsWith("error: ", colonSpace + 2)) {
			const mypy = MYPY_ERROR.exec(trimmed);
			if (mypy) {
				state.addLocation(mypy[1], Number(mypy[2]), mypy[3] ? Number(mypy[3]) : undefined, lineNo);
				if (mypy[5]) state.addException(mypy[5], mypy[4], lineNo);
				else mypyOpen = mypy[4];
				state.hardFailure = true;
				return true;
			}
		}
		// A rule code follows the position's `: `; a digit ends the position.
		if (
			text === trimmed &&
			first !== 32 &&
			isUpperCode(afterColon) &&
			isDigitCode(trimmed.charCodeAt(colonSpace - 1))
		) {
			const lint = LINT_CODE.exec(trimmed);
			if (lint) {
				state.addException(lint[4], lint[5], lineNo);
				state.hardFailure = true;
				return true;
			}
		}
		if (isDigitCode(first) && trimmed.includes(" would ")) {
			const format = FORMAT_CHECK.exec(trimmed);
			if (format) {
				state.summary(lineNo, state.runner ?? "generic", format[1] === "left unchanged" && !format[2]);
				return true;
			}
		}
		// A rule code is one to four capitals and then digits: a digit among the next four characters.
		if (first >= 65 && first <= 90 && text === trimmed && digitWithin(trimmed, 1, 4)) {
			const ruff = RUFF_CODE.exec(trimmed);
			if (ruff) ruffPending = { code: ruff[1], message: ruff[2], line: lineNo };
		}
		if (first === 110 /* n */) {
			const npm = NPM_CODE.exec(trimmed);
			if (npm) {
				state.addException(npm[1], "", lineNo);
				state.softFailure(lineNo);
				return true;
			}
		}

		return false;
	};
	// An eslint file's rows, a mypy error's code line, ruff's `-->` line, a panic's message and the names
	// libtest lists under `failures:` are read after their header.
	const mode = () =>
		eslintFile !== null || mypyOpen !== null || cargoList || panicOpen !== null || ruffPending !== null
			? -1
			: mavenIds
				? 1
				: 0;
	// An output that ends right after a panic's line still records the panic.
	return { line, mode, end: () => closePanic(null) };
}

/** Whether one of the characters at `from` to `to` (inclusive) is an ASCII digit. */
function digitWithin(text: string, from: number, to: number): boolean {
	for (let at = from; at <= to; at++) {
		const code = text.charCodeAt(at);
		if (code >= 48 && code <= 57) return true;
	}
	return false;
}
