import { endsWithText, startsWithText } from "./affixes.js";
import { parseCountedLine } from "./counted.js";
import { exceptionOf } from "./diagnostics.js";
import type { LineFamily, LineParser, ScanState } from "./state.js";

/** `exit code 2`, `Process exited with code 1`, `Command failed with exit status 3`, `│ exit code: 1`. */
const EXIT_STATUS = /^[^\w]{0,3}(?:[\w.'"`-]+ ){0,5}(?:exited with|exit) (?:code|status):? (-?\d+)\W{0,3}$/i;
const NODE_CODE = /^code: '([A-Z][A-Z0-9_]{2,})',?$/;
/** An error object's class in Node's inspected output or TAP YAML: `name: 'AssertionError'`. */
const NODE_NAME = /^name: (['"])((?:[A-Z]\w*)?(?:Error|Exception))\1,?$/;
/** Java's uncaught exception and its causes: `Exception in thread "main" java.lang.X: msg`, `Caused by: ...`. */
const JAVA_UNCAUGHT = /^(?:Exception in thread "[^"]*"|Caused by:) ((?:[a-z_$][\w$]*\.)*[A-Z][\w$]*)(?:: (.*))?$/;
/** make reports the failing recipe's status: `make: *** [Makefile:12: all] Error 2`. */
const MAKE_ERROR = /^make(?:\[\d+\])?: \*\*\* .*\bError \d+/;
/**
 * A coverage gate that failed: jest's `Jest: "global" coverage threshold for lines (95%) not met: 50%`,
 * nyc, c8 and vitest's `ERROR: Coverage for lines (50%) does not meet global threshold (95%)`. The
 * run fails whatever its tests did.
 */
const COVERAGE_GATE = /\bcoverage\b.*\b(?:threshold\b.*\bnot met\b|does not meet\b.*\bthreshold\b)/i;
/** `path.ext: message (line:column)`, the message of a parser's error. */
const PARSER_POSITION = /^(\S+\.\w{1,10}): .*\((\d+):(\d+)\)$/;
/** Clean verdicts of checkers that print no counts. */
const CLEAN_CHECK = /^(?:Success: no issues found in \d+ source files?|All checks passed!)$/;
const ERROR_LINE = /^(?:(?:error|ERROR|fatal|FATAL|Error)(?:\[[\w-]+\])?: \S|npm (?:ERR!|error) \S)/;
/** The characters an `ERROR_LINE` can start with. */
const ERROR_LINE_FIRST = "eEfFn";

/**
 * What any output can say: counted summaries on result-shaped lines, typed exit statuses, exception
 * lines, Node error codes, and `error:` lines (evidence only when no clean summary follows).
 */
export function createGenericParser(state: ScanState): LineFamily {
	let previousException = false;
	/** The last `code: '...'` line read, and whether it was recorded as an exception of its own. */
	let nodeCode: { code: string; line: number; added: boolean } | null = null;
	/** Line of the last counted summary line. */
	let countedAt = Number.NEGATIVE_INFINITY;

	const line: LineParser = (text, trimmed, lineNo) => {
		const afterException = previousException;
		previousException = false;
		if (trimmed === "") return false;

		const counted = parseCountedLine(trimmed);
		if (counted) {
			// pytest is the runner that prints a bare counted line with its duration (`5 failed, 2 passed in 0.3s`).
			const runner = counted.timed ? "pytest" : "generic";
			// A tally printed one count a line (ava: `218 tests failed`, `1 known failure`, `1 test todo`) is one
			// tally: a line close after the last that names none of the counts already read adds to it.
			const adds =
				lineNo - countedAt <= 3 &&
				state.counts !== null &&
				Object.keys(counted.counts).every((key) => state.counts?.[key as keyof typeof counted.counts] === undefined);
			countedAt = lineNo;
			state.setCounts(runner, counted.counts, !adds);
			const failures = (counted.counts.failed ?? 0) + (counted.counts.errors ?? 0);
			const passes = (counted.counts.passed ?? 0) + (counted.counts.skipped ?? 0) + (counted.counts.xfailed ?? 0);
			state.summary(lineNo, runner, failures > 0 ? false : passes > 0 ? true : null);
			return true;
		}

		if (endsWithNumber(trimmed) && /exit/i.test(trimmed)) {
			const exit = EXIT_STATUS.exec(trimmed);
			if (exit) {
				state.statedExitCode = Number(exit[1]);
				state.summary(lineNo, state.runner ?? "exit-status", state.statedExitCode === 0 ? null : false);
				return true;
			}
		}

		// First-character checks spare most lines a pattern run (each pattern is anchored at the start).
		const first = trimmed.charCodeAt(0);
		if ((first === 83 /* S */ || first === 65) /* A */ && CLEAN_CHECK.test(trimmed)) {
			state.summary(lineNo, state.runner ?? "generic", true);
			return true;
		}
		// jest's gate opens with `Jest:`, nyc's, c8's and vitest's with `ERROR:`, karma's with a bracket.
		if (
			(first === 74 /* J */ || first === 69 /* E */ || first === 91) /* [ */ &&
			trimmed.includes("hreshold") &&
			COVERAGE_GATE.test(trimmed)
		) {
			state.summary(lineNo, state.runner ?? "generic", false);
			return true;
		}
		if (first === 109 /* m */ && MAKE_ERROR.test(trimmed)) {
			state.summary(lineNo, state.runner ?? "generic", false);
			return true;
		}
		const java =
			startsWithText(trimmed, "Exception in thread") || startsWithText(trimmed, "Caused by:")
				? JAVA_UNCAUGHT.exec(trimmed)
				: null;
		if (java) {
			state.addException(java[1], java[2] ?? "", lineNo);
			if (trimmed.startsWith("Exception")) state.softFailure(lineNo);
			return true;
		}
		const thrown = exceptionOf(trimmed, false);
		if (thrown) {
			state.addException(thrown.type, thrown.message, lineNo);
			// A parser's error names the file first and the position last (babel, acorn):
			// `SyntaxError: /app/a.test.js: Unexpected token, expected "," (4:0)`.
			if (endsWithText(thrown.message, ")")) {
				const parsed = PARSER_POSITION.exec(thrown.message);
				if (parsed) state.addLocation(parsed[1], Number(parsed[2]), Number(parsed[3]), lineNo);
			}
			// An uncaught error printed at the left margin ends the program (Node, Python, Java).
			if (text === trimmed) state.softFailure(lineNo);
			previousException = true;
			return true;
		}
		if (startsWithText(trimmed, "code: '")) {
			const code = NODE_CODE.exec(trimmed);
			if (code) {
				// The code of an error already read with it as its tag (`AssertionError [ERR_ASSERTION]: ...`,
				// then its properties) is that error again.
				const added = !state.hasExceptionTagged(code[1]);
				if (added) state.addException(code[1], "", lineNo);
				nodeCode = { code: code[1], line: lineNo, added };
			}
			return true;
		}
		if (startsWithText(trimmed, "name: '") || startsWithText(trimmed, 'name: "')) {
			const name = NODE_NAME.exec(trimmed);
			if (name) {
				// Node prints `code` and `name` as neighbouring properties; together they are the error's type.
				const near = nodeCode !== null && lineNo - nodeCode.line <= 4;
				// The code read alone just before (TAP's error dump lists `code:` first) is this error's tag.
				if (near && nodeCode?.added) state.withdrawException(nodeCode.code, nodeCode.line);
				state.addException(near ? `${name[2]} [${nodeCode?.code}]` : name[2], "", lineNo);
			}
			return true;
		}
		if (text === trimmed && ERROR_LINE_FIRST.includes(trimmed[0]) && ERROR_LINE.test(trimmed))
			state.softFailure(lineNo);
		if (afterException && startsWithText(trimmed, "at ")) state.softFailure(lineNo);
		return false;
	};
	return { line, mode: () => (previousException ? 1 : 0) };
}

/** Same as `/\d\W{0,3}$/.test(text)` (a digit, then at most three non-word characters), reading only the end. */
function endsWithNumber(text: string): boolean {
	for (let back = 1; back <= 4 && back <= text.length; back++) {
		const code = text.charCodeAt(text.length - back);
		if (code >= 48 && code <= 57) return true;
		// Any other word character ([A-Za-z_]) ends the search.
		if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95) return false;
	}
	return false;
}
