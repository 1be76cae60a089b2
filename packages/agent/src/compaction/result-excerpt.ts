import { classifyLine, type LineKind } from "prime-agent-context";

/** How much of a long tool result the summariser is shown. */
export interface ExcerptLimits {
	/** Results up to this many characters are shown whole. */
	wholeChars: number;
	/** Characters of the first lines and of the last lines shown. */
	headChars: number;
	tailChars: number;
	/** Characters of the decisive lines between them. */
	decisiveChars: number;
	/** A longer line is shown cut to this many characters. */
	lineChars: number;
}

export const DEFAULT_EXCERPT_LIMITS: ExcerptLimits = {
	wholeChars: 4000,
	headChars: 1500,
	tailChars: 2000,
	decisiveChars: 6000,
	lineChars: 500,
};

/**
 * Lines Prime Context's scan marks as deciding a run, most telling first: the outcome (a test
 * summary, a build verdict), failing tests, exceptions, then errors and source locations.
 */
const DECISIVE_RANK: Partial<Record<LineKind, number>> = {
	summary: 0,
	failure: 1,
	exception: 1,
	error: 2,
	location: 2,
};

/**
 * A long tool result as the summariser sees it: its first and last lines, and between them every
 * line that decides what the run did (its outcome, failing tests, exceptions, errors, locations), in
 * their order, each gap of lines left out said with its size. The verdict of a test run usually
 * sits at the end of a long log and its failures in the middle: a cut after the first few thousand
 * characters loses both. Decisive lines past `decisiveChars` are left out by rank, outcome last.
 */
export function resultExcerpt(text: string, limits: ExcerptLimits = DEFAULT_EXCERPT_LIMITS): string {
	if (text.length <= limits.wholeChars) return text;
	const lines = text.split("\n");
	const shown = (line: string) =>
		line.length > limits.lineChars
			? `${line.slice(0, limits.lineChars)} [... ${count(line.length - limits.lineChars)} more characters]`
			: line;
	const keep = new Set<number>();
	let used = 0;
	let head = 0;
	while (head < lines.length && (head === 0 || used + shown(lines[head] as string).length <= limits.headChars)) {
		used += shown(lines[head] as string).length + 1;
		keep.add(head++);
	}
	used = 0;
	let tail = lines.length;
	while (tail > head && used + shown(lines[tail - 1] as string).length <= limits.tailChars) {
		used += shown(lines[--tail] as string).length + 1;
		keep.add(tail);
	}
	const decisive: { index: number; rank: number }[] = [];
	for (let index = head; index < tail; index++) {
		const line = lines[index] as string;
		// The scan itself reads no further into a line than this.
		const rank = DECISIVE_RANK[classifyLine(line.length > 4096 ? line.slice(0, 4096) : line)];
		if (rank !== undefined) decisive.push({ index, rank });
	}
	used = 0;
	for (const { index } of decisive.sort((a, b) => a.rank - b.rank || a.index - b.index)) {
		const size = shown(lines[index] as string).length + 1;
		if (used + size > limits.decisiveChars) continue;
		used += size;
		keep.add(index);
	}
	const out: string[] = [];
	let skipped = 0;
	for (let index = 0; index < lines.length; index++) {
		if (!keep.has(index)) {
			skipped++;
			continue;
		}
		if (skipped > 0) out.push(`[... ${count(skipped)} ${skipped === 1 ? "line" : "lines"} not shown]`);
		skipped = 0;
		out.push(shown(lines[index] as string));
	}
	if (skipped > 0) out.push(`[... ${count(skipped)} ${skipped === 1 ? "line" : "lines"} not shown]`);
	return out.join("\n");
}

const count = (value: number) => value.toLocaleString("en-US");
