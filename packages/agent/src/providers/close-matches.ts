/**
 * The candidates closest to a mistyped name, best first: by edit distance, with a candidate that
 * contains the name (or starts like it) ahead of one that merely has a similar length. Only
 * candidates within half the name's length in edits are offered, so a wild guess gets none.
 */
export function closeMatches(wanted: string, candidates: readonly string[], limit = 5): string[] {
	const target = wanted.toLowerCase();
	const scored = candidates.map((candidate) => {
		const name = candidate.toLowerCase();
		const distance = editDistance(target, name);
		const bonus = name.includes(target) ? 2 : name.startsWith(target.slice(0, 4)) ? 1 : 0;
		return { candidate, distance, rank: distance - bonus * target.length };
	});
	return scored
		.filter((entry) => entry.rank <= 0 || entry.distance <= Math.max(2, Math.floor(target.length / 2)))
		.sort((a, b) => a.rank - b.rank || a.candidate.localeCompare(b.candidate))
		.slice(0, limit)
		.map((entry) => entry.candidate);
}

/** Levenshtein distance (insertions, deletions and substitutions cost 1). */
function editDistance(a: string, b: string): number {
	let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
	for (let i = 1; i <= a.length; i++) {
		const current = [i];
		for (let j = 1; j <= b.length; j++) {
			const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
			current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
		}
		previous = current;
	}
	return previous[b.length] as number;
}
