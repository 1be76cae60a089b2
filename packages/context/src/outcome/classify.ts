import { endsWithText, startsWithText } from "./affixes.js";
import { trimmedVisibleLine, visibleLine } from "./ansi.js";
import { isDigitCode, isSpaceCode } from "./chars.js";
import { parseCountedLine } from "./counted.js";
import { exceptionOf } from "./diagnostics.js";

/** The role a single output line plays, for capsule selection and burst detection. */
export type LineKind =
	| "summary"
	| "failure"
	| "exception"
	| "location"
	| "error"
	| "warning"
	| "trace"
	| "progress"
	| "usage-option"
	| "bullet"
	| "blank"
	| "plain";

/**
 * The last line (1-based; 0: none) of an output shaped like a failure (`FAIL ...`, `✖ name`, `not ok`),
 * and like an error or exception: without an exit status, such lines anywhere forbid a pass.
 */
export interface ShapedLines {
	failure: number;
	error: number;
}

/** Records that line `lineNo` has `kind` (only failure, exception and error lines count). */
export function noteShaped(shaped: ShapedLines, kind: LineKind, lineNo: number): void {
	if (kind === "failure") shaped.failure = lineNo;
	else if (kind === "exception" || kind === "error") shaped.error = lineNo;
}

/**
 * Result-shaped terminal lines (the counted ones are recognised by `parseCountedLine`); first
 * characters in `SUMMARY_FIRST`.
 */
const SUMMARY = [
	/^=+ .*\b(?:passed|failed|errors?|skipped|no tests ran|xfailed|deselected)\b.* =+$/,
	/^Ran \d+ tests? in /,
	/^OK(?: \(.+\))?$/,
	/^FAILED \(.+\)$/,
	/^(?:Tests|Test Suites|Test Files):?\s+(?:\d+ |no tests)/,
	/^test result: (?:ok|FAILED)\./,
	/^\d+ (?:passing|failing|pending)(?: \(.+\))?$/,
	/^(?:#|ℹ) (?:tests|pass|fail) \d+$/,
	/^(?:Total|Passed|Skipped):\s+\d+$/,
	/^Found \d+ errors?\b/,
	/^✖ \d+ problems? \(/,
	/^(?:ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\))/,
	/^(?:\[(?:INFO|ERROR)\] )?BUILD (?:SUCCESS|FAILURE)$/,
	/^BUILD (?:SUCCESSFUL|FAILED)(?: in .*)?$/,
	/^(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: \d+, Failures: \d+/,
	/^\d+ tests? completed, \d+ failed/,
	/^!{3,} .* !{3,}$/,
	/^(?:Success: no issues found|All checks passed!)/,
];
/** `python -m doctest`'s verdict, tried only on lines that open with it: few summaries start with `*`. */
export const DOCTEST_SUMMARY = /^\*\*\*Test Failed\*\*\* \d+ failures?\.$/;
/** A typed exit status; it may start with any word, so it runs only when the line holds `xit` or `XIT`. */
const EXIT_SUMMARY = /^(?:[\w.'"`-]+ ){0,5}(?:[Ee]xited with|[Ee]xit|EXIT) (?:code|status|CODE|STATUS):? -?\d+\W{0,3}$/;

/**
 * Lines that name a failing test (see also `FAILURE_AT_END`); first characters in `FAILURE_FIRST`, but
 * for `UNEXPECTED SUCCESS: ` (tried by its prefix: many lines open with U).
 */
const FAILURE = [
	/^(?:\[gw\d+\] \[\s*\d+%\] )?(?:FAILED|ERROR) (?:\S+\.(?:py|txt|rst|md)\b|[^:\s][^:]*?\.(?:py|txt|rst|md)::)/,
	/^(?:FAIL|ERROR|UNEXPECTED SUCCESS): \S/,
	/^FAIL\s+\S/,
	/^● \S/,
	// Not a todo test's result (node's `✖ name (1.2ms) # reason`, TAP's `not ok 3 - name # TODO` or `# SKIP`)
	// nor a heading (node's `✖ failing tests:`, printed for todo tests alone too).
	/^[×✕✗✖✘] (?!\S.*? \(\d+(?:\.\d+)?m?s\) # )(?!.*:$)\S/,
	/^not ok \d+(?![^#]*#\s*(?:TODO|SKIP|todo|skip|Todo|Skip)\b)/,
	/^--- FAIL: /,
	/^\d+\) \S/,
	/^\[ERROR\] .*<<< (?:FAILURE|ERROR)!/,
];
/** pytest 9's failed subtest, tried only on lines that open with `SUBFAILED`: many lines start with S. */
const SUBTEST_FAILURE = /^SUBFAILED(?:\(.*?\))? \S+\.(?:py|txt|rst|md)::/;
/**
 * Failing tests named by a verdict at the line's end; they scan the whole line, so they run only when
 * it holds `FAILED` or `ERROR`.
 */
const FAILURE_AT_END = [
	/^\S[^:]*?::\S.* (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?$/,
	/^\S.*? > \S.*? FAILED$/,
	/^\S+ --- FAILED$/,
];
/** unittest/cargo verbose result: `test_x (mod.Class) ... FAIL`. */
const VERBOSE_FAILURE = / \.\.\. (?:FAIL|ERROR|FAILED|unexpected success)$/;

const LOCATION = [
	/^File "[^"]+", line \d+/,
	/^at (?:\S+ (?:\[as \S+\] )?)?\(?(?:file:\/\/)?[^\s()]+:\d+(?::\d+)?\)?$/,
	/^(?:-->|❯) \S+:\d+/,
	/^[^\s:]+\.\w{1,10}:\d+(?::\d+)?(?::|$| - | in )/,
	/^[^\s(]+\.\w{1,10}\(\d+,\d+\)/,
];

/** First characters in `ERROR_FIRST`. */
const ERROR = [
	// `error:` / `ERROR ` but not prose that starts with the word (`error handling`, a mocha suite title).
	/^(?:(?:[Ee]rror|[Ff]atal)(?:\[[\w-]+\])?:|(?:ERROR|FATAL)(?:\[[\w-]+\])?[: ])/,
	/^\[(?:ERROR|FATAL)\]/,
	/^npm (?:ERR!|error) /,
	/^E {2,}\S/,
	/^\d+:\d+\s+error\s/,
];
/** A level after a timestamp or logger name: `2024-05-01 12:00:00 ERROR ...`. */
const LOGGED_ERROR = /^(?:\S+ ){0,3}(?:ERROR|FATAL|CRITICAL)\b/;
/** Diagnostics with a position before the severity: `x.ts:3:7 - error TS2322`, `x.py:3: error: `. */
const INLINE_ERROR = /\berror (?:TS\d+|[A-Z]\d{4})\b|: error: /;

/** First characters in `WARNING_FIRST`. */
const WARNING = [
	/^(?:[Ww]arn(?:ing)?|WARN(?:ING)?)(?:\[[\w-]+\])?[: ]/,
	/^\[WARN(?:ING)?\]/,
	/^npm (?:WARN|warn) /,
	/^\d+:\d+\s+warning\s/,
];
const LOGGED_WARNING = /^(?:\S+ ){0,3}WARN(?:ING)?\b/;
const INLINE_WARNING = /\b\w*Warning: |: warning: /;

/** Log levels that only trace what a program does, near the start of a line (after a timestamp). */
const TRACE_LEVEL = new RegExp(
	`^(?:${[
		// An optional timestamp, then `[debug]`, `<trace>`, `DEBUG ` or `debug: `.
		"(?:\\[?\\d[\\d\\-T:.,/Z+ ]{7,}\\]?\\s+)?(?:(?:\\[\\s*|<)(?:TRACE|DEBUG|VERBOSE|SILLY|DBG|TRC|trace|debug|verbose|silly|dbg|trc)\\s*(?:\\]|>)|(?:TRACE|DEBUG|VERBOSE|SILLY|DBG|TRC)(?::|\\s)|(?:trace|debug|verbose|silly|dbg|trc):\\s)",
		// A logger name or two before an upper-case level: `urllib3.connectionpool DEBUG ...`.
		"(?:\\S+\\s+){1,3}(?:TRACE|DEBUG)\\b",
		"npm (?:verbose|timing|silly|http) ",
	].join("|")})`,
);
/** Cheap test that a line's head may hold a trace level at all. */
const TRACE_WORD = /DEBUG|TRACE|VERBOSE|SILLY|DBG|TRC|debug|trace|verbose|silly|dbg|trc/;
/** A level word or `npm ` opening the line (`TRACE_LEVEL` without a timestamp or bracket first). */
const TRACE_START = /^(?:TRACE|DEBUG|VERBOSE|SILLY|DBG|TRC|trace|debug|verbose|silly|dbg|trc|npm )/;

const PROGRESS = [
	/^(?:Downloading|Downloaded|Collecting|Fetching|Resolving|Installing|Extracting|Unpacking|Compiling|Building|Preparing|Processing|Uploading|Pulling|Pushing|Receiving objects|Resolving deltas|Counting objects|Compressing objects|Writing objects|remote: (?:Counting|Compressing|Enumerating))\b/,
	/^(?:Get|Hit|Ign):\d+ /,
	/^Reading (?:package lists|state information)|^Building dependency tree/,
	/^[0-9a-f]{12}: (?:Pulling fs layer|Waiting|Downloading|Verifying Checksum|Download complete|Extracting|Pull complete)/,
	/^\[INFO\] Download(?:ing|ed) from /,
	/^> Task :/,
	/^(?:Updating|Locking|Downloaded|Blocking waiting for file lock)\b/,
	/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷](?:\s|$)/,
	/^[.FEsxX]{8,}(?:\s+\[\s*\d+%\])?$/,
	/^[․.,!*]{8,}$/,
];
/** Percentages, bars, transferred sizes and ETAs anywhere in the line. */
const PROGRESS_INLINE =
	/\b\d{1,3}(?:\.\d+)?\s?%|\[[=#>\- ]{5,}\]|[█▉▊▋▌▍▎▏━]{4,}|\d(?:\.\d+)?\s?(?:[kKMG]i?B|B)\s*\/\s*\d|\beta \d/i;

/** `  -h, --help  show help`, `  --out-dir <dir>   Where to write`. */
const USAGE_OPTION = /^\s{1,12}(?:-[A-Za-z0-9?](?:[ ,=]|$)|--[A-Za-z0-9][\w-]*)(?:[\s,=|[<]|$)/;
const BULLET = /^\s*(?:[-*•] |\d{1,3}\. |- \[[ xX]\] )\S/;
const PANIC = /^thread '[^']*'(?: \(\d+\))? panicked at /;

/**
 * One anchored alternation per kind: a single match attempt at the line start instead of one per
 * pattern (every pattern above starts with `^` and has no flags).
 */
const union = (patterns: RegExp[]): RegExp =>
	new RegExp(`^(?:${patterns.map((p) => `(?:${p.source.slice(1)})`).join("|")})`);
const SUMMARY_ANY = union(SUMMARY);
const FAILURE_ANY = union(FAILURE);
const FAILURE_AT_END_ANY = union(FAILURE_AT_END);
const LOCATION_ANY = union(LOCATION);
const ERROR_ANY = union(ERROR);
const WARNING_ANY = union(WARNING);
const PROGRESS_ANY = union(PROGRESS);
/**
 * The characters each of these kinds' patterns can start with (after leading whitespace): most lines
 * are ruled out by one comparison instead of a pattern run. A new pattern adds its first characters.
 */
/** Every substring check in `classifyLine` contains one of these. */
const MARKS = /FAIL|ERROR|FATAL|CRITICAL|WARN|error|arning: |xit|XIT/;
const SUMMARY_FIRST = "=ROFTt#ℹPS✖o[B!A0123456789";
const FAILURE_FIRST = "[FE●×✕✗✖✘n-0123456789";
const ERROR_FIRST = "EeFf[n0123456789";
const WARNING_FIRST = "Ww[n0123456789";
const BULLET_FIRST = "-*•0123456789";
/**
 * What a `TRACE_LEVEL` match needs: a bracket, `<` or timestamp digit at the start, a level word or
 * `npm ` opening the line (`TRACE_START`, whose first characters are `TRACE_WORD_FIRST`), or an
 * upper-case level further on. Most lines fail these one-character checks, not a scan of the head.
 */
const TRACE_FIRST = "[<0123456789";
const TRACE_WORD_FIRST = "TDVStdvsn";
const PROGRESS_FIRST = "DCFRIEUBPWrGHL0123456789abcdef[>⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷.sxX․,!*";

const MAY_SUMMARY = 1;
const MAY_FAIL = 2;
const MAY_ERROR = 4;
const MAY_WARN = 8;
const MAY_BULLET = 16;
const MAY_TRACE = 32;
const MAY_PROGRESS = 64;
const MAY_TRACE_WORD = 128;

/**
 * Per first character (UTF-16 code unit), the kinds whose start-anchored patterns it can open: one
 * array read per line instead of a search through each kind's first characters.
 */
const FIRST_FLAGS = (() => {
	const flags = new Uint8Array(0x10000);
	const mark = (chars: string, flag: number) => {
		for (const char of chars) flags[char.charCodeAt(0)] |= flag;
	};
	mark(SUMMARY_FIRST, MAY_SUMMARY);
	mark(FAILURE_FIRST, MAY_FAIL);
	mark(ERROR_FIRST, MAY_ERROR);
	mark(WARNING_FIRST, MAY_WARN);
	mark(BULLET_FIRST, MAY_BULLET);
	mark(TRACE_FIRST, MAY_TRACE);
	mark(PROGRESS_FIRST, MAY_PROGRESS);
	mark(TRACE_WORD_FIRST, MAY_TRACE_WORD);
	return flags;
})();

/**
 * Classifies one output line (ANSI stripped internally). Decisive kinds (summary, failure, exception,
 * error) win over noise kinds (trace, warning, progress) and prose; a warning that names its position
 * is a warning, not a location. Patterns that may match
 * anywhere in a line run only when a cheap substring check says they can.
 */
export function classifyLine(text: string): LineKind {
	const raw = visibleLine(text);
	const line = trimmedVisibleLine(text);
	if (line === "") return text.includes("\r") && text.trim() !== "" ? "progress" : "blank";
	const may = FIRST_FLAGS[line.charCodeAt(0)];
	// One scan instead of a dozen substring checks: the substrings below all contain one of the marks.
	const marked = MARKS.test(line);
	if (
		((may & MAY_SUMMARY) !== 0 && SUMMARY_ANY.test(line)) ||
		(startsWithText(line, "***Test Failed***") && DOCTEST_SUMMARY.test(line)) ||
		(marked && (line.includes("xit") || line.includes("XIT")) && EXIT_SUMMARY.test(line)) ||
		parseCountedLine(line)
	) {
		return "summary";
	}
	if (
		(((may & MAY_FAIL) !== 0 || startsWithText(line, "UNEXPECTED SUCCESS: ")) && FAILURE_ANY.test(line)) ||
		(startsWithText(line, "SUBFAILED") && SUBTEST_FAILURE.test(line)) ||
		(marked && (line.includes("FAILED") || line.includes("ERROR")) && FAILURE_AT_END_ANY.test(line)) ||
		(((marked && (endsWithText(line, "FAIL") || endsWithText(line, "ERROR") || endsWithText(line, "FAILED"))) ||
			endsWithText(line, " unexpected success")) &&
			VERBOSE_FAILURE.test(line))
	) {
		return "failure";
	}
	if (
		(startsWithText(line, "thread '") && PANIC.test(line)) ||
		exceptionOf(startsWithText(line, "E ") ? line.replace(/^E {2,}/, "") : line, false)
	) {
		return "exception";
	}
	if (
		((may & MAY_TRACE) !== 0 ||
			((may & MAY_TRACE_WORD) !== 0 && TRACE_START.test(line)) ||
			inHead(line, "TRACE") ||
			inHead(line, "DEBUG")) &&
		tracedIn(headOf(line))
	) {
		return "trace";
	}
	if (
		((may & MAY_ERROR) !== 0 && ERROR_ANY.test(line)) ||
		(marked && line.includes("error") && INLINE_ERROR.test(line)) ||
		(marked &&
			(inHead(line, "ERROR") || inHead(line, "FATAL") || inHead(line, "CRITICAL")) &&
			LOGGED_ERROR.test(headOf(line)))
	) {
		return "error";
	}
	if (
		((may & MAY_WARN) !== 0 && WARNING_ANY.test(line)) ||
		(marked && line.includes("arning: ") && INLINE_WARNING.test(line)) ||
		(marked && inHead(line, "WARN") && LOGGED_WARNING.test(headOf(line)))
	) {
		return "warning";
	}
	if (mayBeLocation(line) && LOCATION_ANY.test(line)) return "location";
	if (
		((may & MAY_PROGRESS) !== 0 && PROGRESS_ANY.test(line)) ||
		percentShown(line) ||
		(PROGRESS_MARK.test(line) && PROGRESS_INLINE.test(line)) ||
		(text.includes("\r") && /\r./.test(text))
	) {
		return "progress";
	}
	// A usage option is indented: its line is longer than its trimmed text.
	if (line.charCodeAt(0) === 45 /* - */ && raw.length !== line.length && USAGE_OPTION.test(raw)) return "usage-option";
	if ((may & MAY_BULLET) !== 0 && BULLET.test(raw)) return "bullet";
	return "plain";
}

/**
 * What a `LOCATION` match needs (exactly, so the pattern runs only when it can match): `File "`, `at `,
 * `-->` or `❯` at the start, or a digit right after the line's first `:` (`path.ext:12`; the path holds
 * no `:`) or after its first `(` (`path.ext(12,5)`; the path holds no `(`).
 */
function mayBeLocation(line: string): boolean {
	const colon = line.indexOf(":");
	if (colon > 0 && isDigitCode(line.charCodeAt(colon + 1))) return true;
	const paren = line.indexOf("(");
	if (paren > 0 && isDigitCode(line.charCodeAt(paren + 1))) return true;
	return (
		startsWithText(line, 'File "') ||
		startsWithText(line, "at ") ||
		startsWithText(line, "-->") ||
		startsWithText(line, "❯")
	);
}

const PROGRESS_MARK = /[%[━█]|B ?\/|\b(?:eta|ETA) /;

/** The part of a line that level words are looked for in (a logger's level comes early). */
const HEAD_CHARS = 80;

const headOf = (line: string): string => (line.length > HEAD_CHARS ? line.slice(0, HEAD_CHARS) : line);

/** A trace level in a line's head (the word first: most heads hold none). */
const tracedIn = (head: string): boolean => TRACE_WORD.test(head) && TRACE_LEVEL.test(head);

/** `headOf(line).includes(word)`, without cutting the head off: the first occurrence is the one that counts. */
function inHead(line: string, word: string): boolean {
	const at = line.indexOf(word);
	return at >= 0 && at + word.length <= HEAD_CHARS;
}

const isWordCode = (code: number) =>
	isDigitCode(code) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;

/**
 * Whether a number ends at `end` as `PROGRESS_INLINE`'s percentage wants it before its `%`:
 * `\b\d{1,3}(?:\.\d+)?`. A word boundary before a digit means no word character before it, so
 * each digit run is whole.
 */
function percentNumberEndsAt(line: string, end: number): boolean {
	let start = end;
	while (start > 0 && isDigitCode(line.charCodeAt(start - 1))) start--;
	if (start === end) return false;
	if (end - start <= 3 && (start === 0 || !isWordCode(line.charCodeAt(start - 1)))) return true;
	// A fraction: its integer part is one to three digits after a boundary.
	if (start < 2 || line.charCodeAt(start - 1) !== 46 /* . */) return false;
	const dot = start - 1;
	let whole = dot;
	while (whole > 0 && isDigitCode(line.charCodeAt(whole - 1))) whole--;
	return dot - whole >= 1 && dot - whole <= 3 && (whole === 0 || !isWordCode(line.charCodeAt(whole - 1)));
}

/**
 * `PROGRESS_INLINE`'s percentage (`\b\d{1,3}(?:\.\d+)?\s?%`), read back from each `%`: a
 * test run's `[ 52%]` is found without the pattern's walk over the whole line.
 */
export function percentShown(line: string): boolean {
	for (let at = line.indexOf("%"); at !== -1; at = line.indexOf("%", at + 1)) {
		if (at === 0) continue;
		if (percentNumberEndsAt(line, at)) return true;
		if (isSpaceCode(line.charCodeAt(at - 1)) && percentNumberEndsAt(line, at - 1)) return true;
	}
	return false;
}
