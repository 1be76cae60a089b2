import { alignLines, splitLines } from "./align.js";

/** One line of a hunk: context (` `), added (`+`) or removed (`-`). */
export interface HunkLine {
	op: " " | "+" | "-";
	text: string;
}

/** A unified-diff hunk; line numbers are 1-based. */
export interface Hunk {
	beforeStart: number;
	beforeCount: number;
	afterStart: number;
	afterCount: number;
	lines: HunkLine[];
}

export interface LineDelta {
	hunks: Hunk[];
	/** Bytes of lines only the later text has (the novel output; always shown). */
	addedBytes: number;
	addedLines: number;
	removedLines: number;
	beforeLines: number;
	afterLines: number;
}

export interface LineDeltaOptions {
	/** Unchanged lines shown around each change. Default 2. */
	context?: number;
	/** Give up (null) past this many edits. Default 400. */
	maxEdit?: number;
	/** Give up (null) when either text has more lines than this. Default 20,000. */
	maxLines?: number;
}

const lineBytes = (text: string) => Buffer.byteLength(text) + 1;

/**
 * The changed sections of `after` relative to `before`, as unified-diff hunks with a few lines of
 * context. Every added line is in a hunk: the delta never drops novel text. Null when the texts are
 * identical, too large, or too different to align cheaply.
 */
export function lineDelta(before: string, after: string, options: LineDeltaOptions = {}): LineDelta | null {
	const context = options.context ?? 2;
	const beforeLines = splitLines(before);
	const afterLines = splitLines(after);
	const maxLines = options.maxLines ?? 20_000;
	if (beforeLines.length > maxLines || afterLines.length > maxLines) return null;
	const segments = alignLines(beforeLines, afterLines, options.maxEdit ?? 400);
	if (!segments || segments.every((s) => s.kind === "same")) return null;

	// Flatten into per-line operations, then cut hunks around the changes.
	type Op = { op: " " | "+" | "-"; text: string; b: number; a: number };
	const ops: Op[] = [];
	let b = 0;
	let a = 0;
	for (const s of segments) {
		for (let i = 0; i < s.count; i++) {
			if (s.kind === "same") ops.push({ op: " ", text: afterLines[a], b: b++, a: a++ });
			else if (s.kind === "added") ops.push({ op: "+", text: afterLines[a], b, a: a++ });
			else ops.push({ op: "-", text: beforeLines[b], b: b++, a });
		}
	}
	const changed = ops.map((o, i) => (o.op === " " ? -1 : i)).filter((i) => i >= 0);
	const hunks: Hunk[] = [];
	let addedBytes = 0;
	let addedLines = 0;
	let removedLines = 0;
	let k = 0;
	while (k < changed.length) {
		const start = Math.max(0, changed[k] - context);
		let end = Math.min(ops.length - 1, changed[k] + context);
		while (k + 1 < changed.length && changed[k + 1] - context <= end + 1) {
			k++;
			end = Math.min(ops.length - 1, changed[k] + context);
		}
		k++;
		const slice = ops.slice(start, end + 1);
		const first = slice[0];
		const hunk: Hunk = {
			beforeStart: first.b + 1,
			afterStart: first.a + 1,
			beforeCount: slice.filter((o) => o.op !== "+").length,
			afterCount: slice.filter((o) => o.op !== "-").length,
			lines: slice.map((o) => ({ op: o.op, text: o.text })),
		};
		for (const o of slice) {
			if (o.op === "+") {
				addedBytes += lineBytes(o.text);
				addedLines++;
			} else if (o.op === "-") removedLines++;
		}
		hunks.push(hunk);
	}
	return {
		hunks,
		addedBytes,
		addedLines,
		removedLines,
		beforeLines: beforeLines.length,
		afterLines: afterLines.length,
	};
}

/** The hunks as unified-diff text lines (`@@ -b,n +a,m @@`, then ` `, `+`, `-` lines). */
export function lineDeltaText(delta: LineDelta): string[] {
	const out: string[] = [];
	for (const h of delta.hunks) {
		out.push(`@@ -${h.beforeStart},${h.beforeCount} +${h.afterStart},${h.afterCount} @@`);
		for (const l of h.lines) out.push(`${l.op}${l.text}`);
	}
	return out;
}
