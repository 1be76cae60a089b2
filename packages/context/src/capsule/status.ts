import { countsTotal } from "../outcome/counted.js";
import type { Outcome, OutcomeCounts, SuiteResult } from "../types.js";

export { countsTotal };

/** What the host knew about the run besides its text. */
export interface RunFacts {
	isError: boolean;
	exitCode?: number | null;
}

/**
 * The run's status as a capsule may state it. Failure evidence of any kind wins: a tool error, a
 * non-zero exit or a failing outcome is never reported as passing.
 */
export function runStatus(outcome: Outcome, facts: RunFacts): "pass" | "fail" | "unknown" {
	const exitCode = facts.exitCode ?? outcome.exitCode;
	if (facts.isError || (exitCode !== null && exitCode !== undefined && exitCode !== 0)) return "fail";
	if (outcome.status === "fail" || outcome.failingIds.length > 0) return "fail";
	return outcome.status;
}

function countsText(counts: OutcomeCounts): string {
	const order: [keyof OutcomeCounts, string][] = [
		["failed", "failed"],
		["errors", "errors"],
		["passed", "passed"],
		["skipped", "skipped"],
		["todo", "todo"],
		["xfailed", "xfailed"],
		["xpassed", "xpassed"],
	];
	const parts = order.filter(([key]) => (counts[key] ?? 0) > 0).map(([key, name]) => `${counts[key]} ${name}`);
	return parts.length > 0 ? parts.join(", ") : `${countsTotal(counts)} total`;
}

/**
 * The one-line normalized result: `TEST_RESULT PASS 9/9`, `TEST_RESULT FAIL 2 failed, 7 passed`,
 * `COMMAND_RESULT FAIL exit 2`. Null when nothing is known about the outcome.
 */
export function outcomeHeadline(outcome: Outcome, facts: RunFacts): string | null {
	const status = runStatus(outcome, facts);
	const exitCode = facts.exitCode ?? outcome.exitCode;
	const exit = exitCode !== null && exitCode !== undefined ? ` exit ${exitCode}` : "";
	const runner = outcome.runner && outcome.runner !== "exit-status" ? ` (${outcome.runner})` : "";
	if (outcome.counts) {
		const suites = suiteCount(outcome);
		const sum = suites > 1 ? ` (sum of ${suites} suites)` : "";
		return `TEST_RESULT ${resultText(status, outcome.counts)}${sum}${status !== "pass" && exit ? `,${exit}` : ""}`;
	}
	if (status === "pass") return `COMMAND_RESULT PASS${exit}${runner}`;
	if (status === "fail") return `COMMAND_RESULT FAIL${exit}${runner}`;
	// Neither passing nor failing evidence: state the exit status as it is, without a verdict.
	if (exit || runner) return `COMMAND_RESULT${exit}${runner}`;
	return null;
}

/** `PASS 9/9`, `PASS 8/9, 1 skipped`, `FAIL 2 failed, 7 passed`, `UNKNOWN 9 total`. */
function resultText(status: "pass" | "fail" | "unknown", counts: OutcomeCounts): string {
	if (status === "pass") {
		const others = countsText({ ...counts, passed: 0 });
		const extra = others.endsWith(" total") ? "" : `, ${others}`;
		return `PASS ${counts.passed ?? 0}/${countsTotal(counts)}${extra}`;
	}
	return `${status === "fail" ? "FAIL" : "UNKNOWN"} ${countsText(counts)}`;
}

function suiteCount(outcome: Outcome): number {
	return (outcome.suites?.length ?? 0) + (outcome.unlistedSuites?.suites ?? 0);
}

/** Suites listed one a line under the headline, at most; the failed ones first. */
export const MAX_SUITE_LINES = 8;

/**
 * One line per suite when the output holds several (`SUITE FAIL 2 failed, 2 passed (pytest, line
 * 36)`), in output order, at most `MAX_SUITE_LINES`: the failed suites are chosen first, and the
 * rest are counted on a last line. A failed suite is never left out without its count.
 */
export function suiteLines(outcome: Outcome): string[] {
	const suites = outcome.suites ?? [];
	if (suiteCount(outcome) < 2) return [];
	const failedFirst = [...suites.keys()].sort(
		(a, b) => Number(suites[b].status === "fail") - Number(suites[a].status === "fail") || a - b,
	);
	const shown = new Set(failedFirst.slice(0, MAX_SUITE_LINES));
	const lines = suites
		.filter((_, i) => shown.has(i))
		.map(
			(suite: SuiteResult) => `SUITE ${resultText(suite.status, suite.counts)} (${suite.runner}, line ${suite.line})`,
		);
	const rest = suites.filter((_, i) => !shown.has(i));
	const more = rest.length + (outcome.unlistedSuites?.suites ?? 0);
	if (more > 0) {
		const failed = rest.filter((suite) => suite.status === "fail").length + (outcome.unlistedSuites?.failed ?? 0);
		lines.push(`SUITES: and ${more} more, ${failed > 0 ? `${failed} of them failed` : "none of them failed"}`);
	}
	return lines;
}

/**
 * Every status line of a capsule: the headline, each suite's result when there are several, then an
 * explicit tool-error line when there was one.
 */
export function statusLines(outcome: Outcome, facts: RunFacts): string[] {
	const lines: string[] = [];
	const headline = outcomeHeadline(outcome, facts);
	if (headline) lines.push(headline);
	if (outcome.counts) lines.push(...suiteLines(outcome));
	if (facts.isError) lines.push("TOOL_ERROR: the tool reported an error; this result is an error, not a success.");
	return lines;
}

/**
 * `EXCEPTIONS: TypeError x3 (first at line 40), KeyError (line 88), ...`: every distinct type (they
 * are few and short, and each is a fact a reader needs), with line numbers for the first few.
 * Null when none.
 */
export function exceptionsLine(outcome: Outcome, maxTypes = 64, withLines = 6): string | null {
	if (outcome.exceptions.length === 0) return null;
	const byType = new Map<string, { count: number; line: number }>();
	for (const e of outcome.exceptions) {
		const known = byType.get(e.type);
		if (known) known.count++;
		else byType.set(e.type, { count: 1, line: e.line });
	}
	const parts = [...byType.entries()].slice(0, maxTypes).map(([type, { count, line }], i) => {
		const times = count > 1 ? ` x${count}` : "";
		if (i >= withLines) return `${type}${times}`;
		return count > 1 ? `${type}${times} (first at line ${line})` : `${type} (line ${line})`;
	});
	const more = byType.size > maxTypes ? `, and ${byType.size - maxTypes} more types` : "";
	const unrecorded = outcome.unrecordedExceptions ?? 0;
	const past = unrecorded > 0 ? `, and ${unrecorded} more past the first ${outcome.exceptions.length} recorded` : "";
	return `EXCEPTIONS: ${parts.join(", ")}${more}${past}`;
}
