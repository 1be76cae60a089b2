import type { OutcomeCounts } from "../types.js";
import { isDigitCode } from "./chars.js";

/** Count words of test summaries, mapped onto `OutcomeCounts`. */
const COUNT_FIELDS: Record<string, keyof OutcomeCounts | null> = {
	passed: "passed",
	passing: "passed",
	pass: "passed",
	succeeded: "passed",
	ok: "passed",
	failed: "failed",
	failing: "failed",
	fail: "failed",
	failures: "failed",
	failure: "failed",
	skipped: "skipped",
	skip: "skipped",
	pending: "skipped",
	ignored: "skipped",
	error: "errors",
	errors: "errors",
	todo: "todo",
	xfailed: "xfailed",
	xpassed: "xpassed",
	total: "total",
	deselected: null,
	warning: null,
	warnings: null,
	rerun: null,
	"subtests passed": null,
	"subtests failed": "failed",
	"subtests skipped": null,
	"expected failures": "xfailed",
	"unexpected successes": "xpassed",
};

const ITEM =
	"(\\d+) (?:tests? )?(passed|passing|failed|failing|failures?|skipped|pending|errors?|todo|xfailed|xpassed|deselected|warnings?|rerun|succeeded|subtests (?:passed|failed|skipped)|total)";
/** `in 0.10s`, and pytest's `in 62.31s (0:01:02)` for a minute or more (the decoration trim may take its `)`). */
const DURATION = "(?:in|after) \\d+(?:\\.\\d+)?\\s?(?:s|ms|sec|seconds?)(?: \\([\\d:.]+\\)?)?";
/** A line made only of counts (`1 failed, 8 passed in 0.10s`), once decorations are trimmed. */
const COUNTED_LINE = new RegExp(`^${ITEM}(?:,? ${ITEM})*(?: ${DURATION})?$`);
const COUNT_ITEM = new RegExp(ITEM, "g");
/** Decorations around a summary: pytest's `====`, separators, brackets, bullets. */
const DECORATION = /^[\s=\-_*#!~.:>|[\]()]+|[\s=\-_*#!~.:<|[\]()]+$/g;

export interface CountedLine {
	counts: OutcomeCounts;
	/** The line says how long it took (`in 0.10s`), which pytest always does. */
	timed: boolean;
}

/**
 * Counts from a result-shaped line: nothing but counted items, optionally a duration and decorations.
 * Prose that merely contains counts (`Return 0 succeeded, 1 failed/cancelled`) is not result-shaped.
 */
export function parseCountedLine(text: string): CountedLine | null {
	if (text.length > 300 || !startsWithCount(text)) return null;
	// The line classifier and the generic parser ask about the same line in turn.
	if (text === lastCounted.text) return lastCounted.result;
	const core = text.replace(DECORATION, "");
	const result = COUNTED_LINE.test(core) ? { counts: countsOf(core), timed: / (?:in|after) \d/.test(core) } : null;
	lastCounted = { text, result };
	return result;
}

let lastCounted: { text: string; result: CountedLine | null } = { text: "", result: null };

/** Character codes of the decorations `startsWithCount` skips: space, tab and ``=-_*#!~.:>|[]()``. */
const DECORATION_CODES = new Set([..." \t=-_*#!~.:>|[]()"].map((char) => char.charCodeAt(0)));

/** First letters of what may follow a count's number and space in `ITEM` (`tests`, `passed`, `failed`...). */
const ITEM_FIRST = new Set([..."tpfsexdwr"].map((char) => char.charCodeAt(0)));

/**
 * Cheap pre-check: after the decorations comes a number, a space and the first letter of a count
 * word, as every counted item starts (`1) name`, `12 | code`, `2024-05-01 ...` and other lines that
 * merely start with digits stop here).
 */
function startsWithCount(text: string): boolean {
	for (let i = 0; i < text.length; i++) {
		const code = text.charCodeAt(i);
		if (isDigitCode(code)) {
			let end = i + 1;
			while (isDigitCode(text.charCodeAt(end))) end++;
			return text.charCodeAt(end) === 32 && ITEM_FIRST.has(text.charCodeAt(end + 1));
		}
		if (!DECORATION_CODES.has(code)) return false;
	}
	return false;
}

/** Sums `N word` items of a summary into counts (`1 failed, 2 passed`, `failures=1, errors=2`). */
export function countsOf(text: string): OutcomeCounts {
	const counts: OutcomeCounts = {};
	for (const match of text.matchAll(COUNT_ITEM)) add(counts, match[2], Number(match[1]));
	return counts;
}

/** Counts from `key=value` pairs, as unittest prints them: `failures=1, errors=2, skipped=3`. */
export function countsOfPairs(text: string): OutcomeCounts {
	const counts: OutcomeCounts = {};
	for (const match of text.matchAll(/([a-z][a-z ]*?)=(\d+)/g)) add(counts, match[1].trim(), Number(match[2]));
	return counts;
}

export function add(counts: OutcomeCounts, word: string, value: number): void {
	const field = COUNT_FIELDS[word.toLowerCase()];
	if (field) counts[field] = (counts[field] ?? 0) + value;
}

/** Tests a summary counted: its stated total, else the sum of its counts. */
export function countsTotal(counts: OutcomeCounts): number {
	if (counts.total !== undefined) return counts.total;
	return (
		(counts.passed ?? 0) +
		(counts.failed ?? 0) +
		(counts.errors ?? 0) +
		(counts.skipped ?? 0) +
		(counts.todo ?? 0) +
		(counts.xfailed ?? 0) +
		(counts.xpassed ?? 0)
	);
}
