import type { Outcome, OutcomeCounts } from "../types.js";

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
		const c = outcome.counts;
		if (status === "pass") {
			const total = countsTotal(c);
			const others = countsText({ ...c, passed: 0 });
			const extra = others.endsWith(" total") ? "" : `, ${others}`;
			return `TEST_RESULT PASS ${c.passed ?? 0}/${total}${extra}`;
		}
		return `TEST_RESULT ${status === "fail" ? "FAIL" : "UNKNOWN"} ${countsText(c)}${exit ? `,${exit}` : ""}`;
	}
	if (status === "pass") return `COMMAND_RESULT PASS${exit}${runner}`;
	if (status === "fail") return `COMMAND_RESULT FAIL${exit}${runner}`;
	// Neither passing nor failing evidence: state the exit status as it is, without a verdict.
	if (exit || runner) return `COMMAND_RESULT${exit}${runner}`;
	return null;
}

/** Every status line of a capsule: the headline, then an explicit tool-error line when there was one. */
export function statusLines(outcome: Outcome, facts: RunFacts): string[] {
	const lines: string[] = [];
	const headline = outcomeHeadline(outcome, facts);
	if (headline) lines.push(headline);
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
