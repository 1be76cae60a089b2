import type { Outcome } from "../types.js";

/** Volatile parts of ids and messages: addresses, durations, timestamps, temp paths, process ids. */
const VOLATILE: [RegExp, string][] = [
	[/0x[0-9a-f]{4,}/gi, "0x…"],
	[/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, "<time>"],
	[/\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b/g, "<time>"],
	[/\(?\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b\)?/g, "<duration>"],
	[/(?:\/tmp|\/var\/folders|\/private\/var)\/[^\s'")]+/g, "<tmp>"],
	[/\bthread '([^']*)' \(\d+\)/g, "thread '$1'"],
];

function normalize(text: string): string {
	let out = text;
	for (const [pattern, replacement] of VOLATILE) out = out.replace(pattern, replacement);
	return out.trim();
}

/**
 * A normalized, comparable text of an outcome for outcome deltas: runner, status, counts, sorted failing
 * ids and exception types. Equal strings mean semantically identical outcomes. Durations, timestamps,
 * addresses, temp paths and line numbers of the output are left out.
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
	const exit = outcome.exitCode === null ? "-" : String(outcome.exitCode);
	return [
		`runner=${outcome.runner ?? "-"}`,
		`status=${outcome.status}`,
		`exit=${exit}`,
		`counts=${counts}`,
		`failing=${ids.length}:${ids.join("\u001f")}`,
		`exceptions=${types.join("\u001f")}`,
	].join("\n");
}
