import type { Outcome } from "../types.js";

/**
 * Volatile parts that can appear inside a test id: object addresses in parameter ids, per-run temp
 * directories. Durations never reach ids (parsers strip them), and digits that are part of a test's
 * name (`handles 10s`) must stay.
 */
const VOLATILE: [RegExp, string][] = [
	[/0x[0-9a-f]{4,}/gi, "0x…"],
	[/(?:\/tmp|\/var\/folders|\/private\/var)\/[^\s'")\]]+/g, "<tmp>"],
	[/\bpytest-\d+\b/g, "pytest-<n>"],
];

function normalize(text: string): string {
	let out = text;
	for (const [pattern, replacement] of VOLATILE) out = out.replace(pattern, replacement);
	return out.trim();
}

/** Durations and clock times, which differ between runs of the same failure. */
const TIMING: [RegExp, string][] = [
	[/\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?)\b/g, "<t>"],
	// A duration named by its key: node's TAP reporter (`duration_ms: 3.49`, `# duration_ms 1833.0`).
	[/\b(duration_(?:ms|s):? *)\d+(?:\.\d+)?\b/g, "$1<t>"],
	[/\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?/g, "<time>"],
	[/\b\d{1,2}:\d\d:\d\d(?:[.,]\d+)?\b/g, "<time>"],
];

/**
 * One evidence line (a failure, exception, error or location line) as outcome deltas compare it:
 * exact but for addresses, temp paths, durations and clock times.
 */
export function normalizeEvidence(text: string): string {
	let out = normalize(text);
	for (const [pattern, replacement] of TIMING) out = out.replace(pattern, replacement);
	return out;
}

/**
 * A normalized, comparable text of an outcome for outcome deltas: runner, status, exit status, counts,
 * sorted failing ids and sorted exception types. Equal strings mean semantically identical outcomes.
 * Durations, timestamps and output line numbers are not part of an `Outcome`'s compared fields, and
 * addresses and temp paths inside ids are masked.
 */
export function outcomeSignature(outcome: Outcome): string {
	const counts = outcome.counts
		? Object.entries(outcome.counts)
				.filter(([, value]) => value !== undefined)
				.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
				.map(([key, value]) => `${key}=${value}`)
				.join(",")
		: "-";
	const ids = [...new Set(outcome.failingIds.map(normalize))].sort();
	const types = [...new Set(outcome.exceptions.map((e) => normalize(e.type)))].sort();
	return [
		`runner=${outcome.runner ?? "-"}`,
		`status=${outcome.status}`,
		`exit=${outcome.exitCode ?? "-"}`,
		`counts=${counts}`,
		`failing=${ids.length}+${outcome.unrecordedFailingIds ?? 0}:${ids.join("\u001f")}`,
		`exceptions=${types.join("\u001f")}`,
	].join("\n");
}
