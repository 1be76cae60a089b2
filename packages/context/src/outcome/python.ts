import { endsWithText, startsWithText } from "./affixes.js";
import { isSpaceCode } from "./chars.js";
import { DOCTEST_SUMMARY } from "./classify.js";
import { countsOfPairs, parseCountedLine } from "./counted.js";
import { exceptionOf } from "./diagnostics.js";
import type { LineFamily, LineParser, ScanState } from "./state.js";

/** pytest short summary or xdist line: `FAILED tests/x.py::T::t - Msg`, `[gw0] [ 1%] ERROR tests/x.py`. */
const PYTEST_RESULT = /^(?:\[gw\d+\] \[\s*\d+%\] )?(FAILED|ERROR) (\S.*)$/;
/** pytest 9's failed subtest: `SUBFAILED(i=2, label='a b') tests/x.py::T::t - AssertionError: ...`. */
const PYTEST_SUBFAILED = /^SUBFAILED(?:\(.*?\))? (\S+\.(?:py|txt|rst|md)::.*)$/;
/** pytest verbose line: `tests/x.py::T::t FAILED  [ 12%]` (a file holding spaces: `PYTEST_SPACED_FILE`). */
const PYTEST_VERBOSE = /^(\S.*?\.py::\S.*?) (FAILED|ERROR)(?:\s+\[\s*\d+%\])?$/;
const PYTEST_SECTION =
	/^[=_-]{3,} ?(test session starts|FAILURES|ERRORS|short test summary info|warnings summary|PASSES)/;
/** A test's section header inside FAILURES/ERRORS: `____ TestClass.test_x[param] ____`. */
const PYTEST_HEADER = /^_{3,} (.+?) _{3,}$/;
const PYTEST_HEADER_PREFIX = /^(?:ERROR collecting |ERROR at (?:setup|teardown) of |\[doctest\] )/;
const PYTEST_BANG = /^!{3,} (.+?) !{3,}$/;
/** pytest's progress line (`..F.s [ 40%]`): a run's first line under `-q`. */
const PYTEST_PROGRESS = /^[.FEsxX]+\s+\[\s*\d+%\]$/;
/** A captured-output section of a failure's report: `---- Captured stdout call ----`. */
const PYTEST_CAPTURED = /^-{3,} Captured \S+(?: \S+)? -{3,}$/;
/** A node id's file: letters of any script, digits and `_./\-`. */
const PYTEST_FILE = /^[\p{L}\p{M}\p{N}_./\\-]+\.(?:py|txt|rst|md)$/u;
/** A node id's file whose folders or name hold spaces (`my tests/test_a.py`): it must have a folder. */
const PYTEST_SPACED_FILE = /^[^\s:][^:]*[/\\][^:/\\]*[^\s:]\.(?:py|txt|rst|md)$/;
const PYTEST_ERROR_LINE = /^E {2,}(\S.*)$/;
/** The end of a pytest traceback: `src/x.py:104: RuntimeError` (a type after the raising frame). */
const PYTEST_RAISE = /^(\S+\.py):(\d+): ((?:[a-z_]\w*\.)*[A-Z]\w*)$/;
/** The same in pytest's FAILURES section, where the file's folders may hold spaces (`isPytestNode`). */
const PYTEST_SPACED_RAISE = /^([^\s:][^:]*\.py):(\d+): ((?:[a-z_]\w*\.)*[A-Z]\w*)$/;

/**
 * Whether `id` is a pytest node id: a file, then any `::` parts. The file's folders and name may
 * hold spaces when it has a folder and the id is plainly pytest's: a test part follows it
 * (`my tests/test_a.py::t`), or `message` (pytest's ` - ` after the id) does. A log line such as
 * `ERROR could not load plugins/my plugin.py` is prose, not a test file.
 */
function isPytestNode(id: string, message: boolean): boolean {
	const parts = id.indexOf("::");
	if (parts >= 0 && parts + 2 === id.length) return false;
	const file = nodeFile(id);
	return PYTEST_FILE.test(file) || ((parts >= 0 || message) && PYTEST_SPACED_FILE.test(file));
}

/** The file of a node id: up to its first `::`. */
function nodeFile(id: string): string {
	const parts = id.indexOf("::");
	return parts < 0 ? id : id.slice(0, parts);
}

/**
 * A pytest result's node id and message: the id ends at the first ` - ` outside its parameter
 * brackets (`test_p[with - dash] - AssertionError: ...`); with none, the whole text is the id when
 * its brackets balance (`test_p[a - b]`), else it ends at the first ` - ` after a `]`, or the first.
 */
function splitPytestResult(rest: string): { id: string; message: string | null } {
	const first = rest.indexOf(" - ");
	if (first < 0) return { id: rest, message: null };
	let depth = 0;
	let scanned = 0;
	const depthAt = (to: number) => {
		for (; scanned < to; scanned++) {
			const code = rest.charCodeAt(scanned);
			if (code === 91 /* [ */) depth++;
			else if (code === 93 /* ] */) depth--;
		}
		return depth;
	};
	for (let at = first; at >= 0; at = rest.indexOf(" - ", at + 1)) {
		if (depthAt(at) === 0) return { id: rest.slice(0, at), message: rest.slice(at + 3) };
	}
	// Every ` - ` is inside brackets that close by the end: the whole text is the id.
	if (depthAt(rest.length) === 0) return { id: rest, message: null };
	// The brackets never balance (a parameter holds a lone `[`): a parametrised id still ends with its `]`.
	for (let at = first; at >= 0; at = rest.indexOf(" - ", at + 1)) {
		if (rest.charCodeAt(at - 1) === 93 /* ] */) return { id: rest.slice(0, at), message: rest.slice(at + 3) };
	}
	return { id: rest.slice(0, first), message: rest.slice(first + 3) };
}

/**
 * What a `PYTEST_RAISE` match needs, checked without the pattern (whose `\S+\.py` backtracks on
 * long lines): `.py:`, and a single space, right after a colon.
 */
function mayBeRaise(trimmed: string): boolean {
	if (!trimmed.includes(".py:")) return false;
	const space = trimmed.indexOf(" ");
	return space > 0 && trimmed.charCodeAt(space - 1) === 58 && trimmed.indexOf(" ", space + 1) === -1;
}

/** `mayBeRaise` for a file whose path may hold spaces: the line's last space follows a colon. */
function mayBeSpacedRaise(trimmed: string): boolean {
	const space = trimmed.lastIndexOf(" ");
	return space > 0 && trimmed.charCodeAt(space - 1) === 58 && trimmed.includes(".py:");
}

/**
 * A `PYTEST_SPACED_RAISE` whose file has a folder and holds a space (the others are `PYTEST_RAISE`'s),
 * raising a type named as exceptions are (`...Error`, `...Exception`): with spaces allowed in the
 * path, `see my notes/in the file.py:3: TODO` would otherwise read as one.
 */
function spacedRaise(trimmed: string): RegExpExecArray | null {
	const raise = PYTEST_SPACED_RAISE.exec(trimmed);
	return raise?.[1].includes(" ") && PYTEST_SPACED_FILE.test(raise[1]) && EXCEPTION_NAME.test(raise[3]) ? raise : null;
}

const EXCEPTION_NAME = /(?:Error|Exception|Failure|Failed|Exit|Interrupt|Warning)$/;

/** A type's class name without its module: `JSONDecodeError` of `json.decoder.JSONDecodeError`. */
const className = (type: string) => type.slice(type.lastIndexOf(".") + 1);

/** A failing test's header; an unexpected success (`@expectedFailure` that passed) fails the run too. */
const UNITTEST_HEADER = /^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S.*)$/;
const UNITTEST_VERBOSE = /^\s*(\S.*?) \.\.\. (FAIL|ERROR|unexpected success)$/;
const UNITTEST_RAN = /^Ran (\d+) tests? in [\d.]+s$/;
const UNITTEST_OK = /^OK(?: \((.+)\))?$/;
const UNITTEST_FAILED = /^FAILED \((.+)\)$/;

/** `python -m doctest -v`: `1 passed and 1 failed.` (its `***Test Failed***` verdict: `DOCTEST_SUMMARY`). */
const DOCTEST_COUNTS = /^(\d+) passed and (\d+) failed\.$/;
/** Under `N items had failures:`, each failing item: `   1 of   2 in mod.double`. */
const DOCTEST_ITEMS = /^\d+ items? had failures:$/;
const DOCTEST_ITEM = /^\s+\d+ of\s+\d+ in (\S+)$/;
const TRACEBACK = /^(\s*)(?:\+ )?Traceback \(most recent call last\):$/;
/**
 * The interpreter itself died (`os.abort()`, a segfault in an extension): `Fatal Python error: Aborted`,
 * also after pytest's progress on the same line (`tests/test_crash.py Fatal Python error: Aborted`).
 */
const FATAL = /(?:^|\s)Fatal Python error: (.*)$/;
/** Python 3.11+ prints an exception group's traceback, and each sub-exception's, behind a `|` gutter. */
const GROUP_TRACEBACK = /^(?:\+ )?Exception Group Traceback \(most recent call last\):$/;
const GROUP_GUTTER = /^\s*\| ?/;
/** `+-+---------------- 1 ----------------` and `+------------------------------------` between sub-exceptions. */
const GROUP_SEPARATOR = /^\s*\+[-+]/;

/** pytest, unittest and bare Python tracebacks. */
export function createPythonParser(state: ScanState): LineFamily {
	/** Indentation of the open traceback, or -1 outside one. */
	let tracebackIndent = -1;
	let unittestHeaderLine = -1;
	/** Inside pytest's FAILURES or ERRORS section, where `____ name ____` headers name failing tests. */
	let pytestFailureSection = false;
	/**
	 * A pytest summary was read and no run has started since: more of a run's report (a failure's
	 * header, a captured-output section, the short summary, another summary) says it was quoted in
	 * that report (pytest's own tests print the runs they start), not the end of a run.
	 */
	let afterSummary = false;
	/**
	 * Exception types the `E` lines of the current pytest traceback stated, by class name alone. The
	 * `path:N: Type` line that ends the traceback names the same exception again (by its bare
	 * `__name__`, where the `E` line may qualify it with its module: `json.decoder.JSONDecodeError`):
	 * it is recorded only when no `E` line did.
	 */
	let statedTypes: string[] = [];
	/** Inside an exception group's rendering (`GROUP_TRACEBACK`), until a line without its gutter. */
	let inGroup = false;
	/**
	 * The last pytest `E` line, and whether its run of consecutive `E` lines stated an exception: the
	 * lines after that one are its message (`Regex: 'x'`, `Input: 'y'` under `pytest.raises(match=)`'s
	 * AssertionError), not exceptions of their own.
	 */
	let errorLine = -1;
	let errorRunStated = false;
	/** On the items listed under doctest's `N items had failures:`. */
	let doctestItems = false;

	const line: LineParser = (text, trimmed, lineNo) => {
		if (trimmed === "") return false;

		if (inGroup) {
			const gutter = GROUP_GUTTER.exec(text);
			if (gutter) {
				// The group and each sub-exception (or nested group) are stated right at the gutter; their
				// frames and source lines are indented under it.
				const inner = text.slice(gutter[0].length);
				const thrown = isSpaceCode(inner.charCodeAt(0)) ? null : exceptionOf(inner.trimEnd(), true);
				if (thrown) {
					state.addException(thrown.type, thrown.message, lineNo);
					state.softFailure(lineNo);
				}
				return true;
			}
			if (GROUP_SEPARATOR.test(text)) return true;
			inGroup = false;
		}

		if (tracebackIndent >= 0) {
			const indent = text.length - text.trimStart().length;
			if (indent > tracebackIndent || /^File "/.test(trimmed)) return true;
			tracebackIndent = -1;
			const thrown = exceptionOf(trimmed, true);
			if (thrown) {
				state.addException(thrown.type, thrown.message, lineNo);
				state.softFailure(lineNo);
				return true;
			}
		}
		if (endsWithText(trimmed, "):")) {
			const traceback = TRACEBACK.exec(text);
			if (traceback) {
				tracebackIndent = traceback[1].length;
				return true;
			}
			if (GROUP_TRACEBACK.test(trimmed)) {
				inGroup = true;
				return true;
			}
		}

		// The interpreter's message opens the line, or follows pytest's progress: its `: ` is the first.
		const colonSpace = state.colonSpace();
		if (colonSpace >= 18 && trimmed.startsWith("Fatal Python error", colonSpace - 18)) {
			const fatal = FATAL.exec(trimmed);
			if (fatal) {
				state.addException("Fatal Python error", fatal[1], lineNo);
				state.hardFailure = true;
				return true;
			}
		}

		if (doctestItems) {
			const item = DOCTEST_ITEM.exec(text);
			if (item) {
				state.addId(item[1], { needs: "doctest" });
				return true;
			}
			doctestItems = false;
		}
		if (endsWithText(trimmed, "failures:") && DOCTEST_ITEMS.test(trimmed)) {
			doctestItems = true;
			return true;
		}
		if (startsWithText(trimmed, "***Test Failed***") && DOCTEST_SUMMARY.test(trimmed)) {
			state.summary(lineNo, "doctest", false);
			return true;
		}
		if (endsWithText(trimmed, " failed.")) {
			const counts = DOCTEST_COUNTS.exec(trimmed);
			if (counts) {
				state.setCounts("doctest", { passed: Number(counts[1]), failed: Number(counts[2]) }, true);
				state.summary(lineNo, "doctest", Number(counts[2]) === 0 ? null : false);
				return true;
			}
		}

		const first = trimmed.charCodeAt(0);
		// Fast path: most lines start with none of the characters the patterns below need.
		if (first === 69 /* E */) {
			// An `E` alone is an empty line of a message.
			const pytestError = trimmed === "E" ? null : PYTEST_ERROR_LINE.exec(text);
			if (pytestError || trimmed === "E") {
				if (errorLine !== lineNo - 1) errorRunStated = false;
				errorLine = lineNo;
				const thrown = pytestError && !errorRunStated ? exceptionOf(pytestError[1], true) : null;
				if (thrown) {
					errorRunStated = true;
					state.addException(thrown.type, thrown.message, lineNo);
					const name = className(thrown.type);
					if (!statedTypes.includes(name)) statedTypes.push(name);
				}
				return true;
			}
		}

		const raise = mayBeRaise(trimmed)
			? PYTEST_RAISE.exec(trimmed)
			: pytestFailureSection && mayBeSpacedRaise(trimmed)
				? spacedRaise(trimmed)
				: null;
		if (raise) {
			if (!statedTypes.includes(className(raise[3]))) state.addException(raise[3], "", lineNo);
			statedTypes = [];
			return true;
		}

		// Each of these opens with `FAIL`, `ERROR`, `SUBFAILED`, `UNEXPECTED SUCCESS` or an xdist worker (`[gw`).
		if (
			(first === 70 /* F */ && trimmed.startsWith("FAIL")) ||
			(first === 83 /* S */ && trimmed.startsWith("SUBFAILED")) ||
			(first === 85 /* U */ && trimmed.startsWith("UNEXPECTED SUCCESS: ")) ||
			(first === 69 /* E */ && trimmed.startsWith("ERROR")) ||
			(first === 91 /* [ */ && trimmed.startsWith("[gw"))
		) {
			const result = first === 83 ? PYTEST_SUBFAILED.exec(trimmed) : PYTEST_RESULT.exec(trimmed);
			// The node id and message: after the verdict, or after a subtest's parameters.
			const split = result ? splitPytestResult(first === 83 ? result[1] : result[2]) : null;
			if (split && isPytestNode(split.id, split.message !== null)) {
				// A node id never ends in a space (a parameter's spaces are inside its brackets): the spaces
				// xdist prints after the id are not part of it.
				state.addId(split.id, { needs: "pytest", marked: true, whole: true });
				if (split.message) {
					const thrown = exceptionOf(split.message, true);
					if (thrown) state.addException(thrown.type, thrown.message, lineNo);
				}
				return true;
			}
			const header = UNITTEST_HEADER.exec(trimmed);
			if (header) {
				state.addId(header[2], { needs: "unittest", marked: header[1] === "FAIL" });
				unittestHeaderLine = lineNo;
				return true;
			}
			const failed = UNITTEST_FAILED.exec(trimmed);
			if (failed && state.isConfirmed("unittest")) {
				state.setCounts("unittest", countsOfPairs(failed[1]), false);
				state.summary(lineNo, "unittest", false);
				return true;
			}
		}
		if (unittestHeaderLine === lineNo - 1 && startsWithText(trimmed, "Doctest: ")) {
			state.addId(trimmed.slice(9), { needs: "unittest" });
			return true;
		}

		if (
			(endsWithText(trimmed, "FAILED") || endsWithText(trimmed, "ERROR") || endsWithText(trimmed, "%]")) &&
			/\b(?:FAILED|ERROR)\b/.test(trimmed)
		) {
			const verbose = PYTEST_VERBOSE.exec(trimmed);
			const file = verbose ? nodeFile(verbose[1]) : "";
			if (verbose && (!file.includes(" ") || PYTEST_SPACED_FILE.test(file))) {
				state.addId(verbose[1]);
				state.sawRunner("pytest");
				return true;
			}
		}
		if (endsWithText(trimmed, " FAIL") || endsWithText(trimmed, " ERROR") || endsWithText(trimmed, " success")) {
			const verbose = UNITTEST_VERBOSE.exec(text);
			if (verbose) {
				state.addId(verbose[1], { needs: "unittest" });
				return true;
			}
		}

		if (first === 61 /* = */ || first === 95 /* _ */ || first === 45 /* - */ || first === 33 /* ! */) {
			const section = PYTEST_SECTION.exec(trimmed);
			if (section) {
				pytestFailureSection = section[1] === "FAILURES" || section[1] === "ERRORS";
				statedTypes = [];
				// A run's report opens with its header, or under `-q` with its failures or errors.
				if (afterSummary && !pytestFailureSection && section[1] !== "test session starts")
					state.quotedSummary("pytest");
				afterSummary = false;
				if (section[1] === "test session starts") state.runStarts("pytest");
				else state.sawRunner("pytest");
				return true;
			}
			if (afterSummary && (PYTEST_HEADER.test(trimmed) || PYTEST_CAPTURED.test(trimmed))) {
				state.quotedSummary("pytest");
				afterSummary = false;
			}
			const header = pytestFailureSection ? PYTEST_HEADER.exec(trimmed) : null;
			if (header) {
				statedTypes = [];
				state.addId(header[1].replace(PYTEST_HEADER_PREFIX, ""), { needs: "pytest", alias: true });
				return true;
			}
			if (first === 61 && /^={3,} .* ={3,}$/.test(trimmed)) {
				pytestFailureSection = false;
				if (parseCountedLine(trimmed)?.timed) pytestSummary();
			}
			const bang = PYTEST_BANG.exec(trimmed);
			if (bang && /Interrupted|stopping after|KeyboardInterrupt/.test(bang[1])) {
				state.summary(lineNo, "pytest", false);
				return true;
			}
		}

		// `-q` ends a run with a bare summary, and opens the next with its progress line.
		if (first >= 48 && first <= 57 && parseCountedLine(trimmed)?.timed) pytestSummary();
		if (afterSummary && PYTEST_PROGRESS.test(trimmed)) afterSummary = false;

		if (first === 82 /* R */) {
			const ran = UNITTEST_RAN.exec(trimmed);
			if (ran) {
				state.setCounts("unittest", { total: Number(ran[1]) }, true);
				state.summary(lineNo, "unittest", null);
				return true;
			}
		}
		if (first === 79 /* O */ && state.isConfirmed("unittest")) {
			const ok = UNITTEST_OK.exec(trimmed);
			if (ok) {
				if (ok[1]) state.setCounts("unittest", countsOfPairs(ok[1]), false);
				state.summary(lineNo, "unittest", true);
				return true;
			}
		}

		return false;
	};
	/** A pytest summary line: one read before it since the last run start was quoted (see `afterSummary`). */
	function pytestSummary(): void {
		if (afterSummary) state.quotedSummary("pytest");
		afterSummary = true;
	}
	// A traceback or an exception group reads the lines that follow it, and so do a unittest header
	// (`Doctest: `) and doctest's list of failing items.
	const mode = (lineNo: number) =>
		tracebackIndent >= 0 || inGroup || doctestItems || unittestHeaderLine === lineNo - 1
			? -1
			: (pytestFailureSection ? 1 : 0) | (afterSummary ? 2 : 0);
	return { line, mode };
}
