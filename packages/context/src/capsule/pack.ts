import { escapedPrefix, escapeXmlText, utf8Bytes } from "./escape.js";

/** One candidate line for a capsule excerpt, with its original coordinates. */
export interface ExcerptLine {
	/** 1-based line number in the archived text; becomes the line's label. */
	line: number;
	/** The line's text (ANSI already removed); may itself be a capped prefix of the original line. */
	text: string;
	/** Lower is more important. Lines are admitted in priority order, then printed in line order. */
	priority: number;
	/** UTF-8 bytes of the full original line, when `text` is a capped prefix of it. */
	bytes?: number;
	/** How many lines of the same shape this line stands for (itself included). */
	repeats?: number;
	/** Those lines are identical to this one, not only of its shape. */
	identical?: boolean;
}

export interface PackOptions {
	/** Bytes the packed excerpt may occupy, newlines included. Never exceeded. */
	budget: number;
	/** Bytes one rendered line may occupy (label and markers included). */
	maxLineBytes: number;
}

export interface PackedExcerpt {
	/** Rendered lines, each `N: text` and ending with a newline; empty when nothing fits. */
	text: string;
	/** Line numbers packed, ascending. */
	lines: number[];
	bytes: number;
}

/** Shortest useful truncated line: below this a line is left out rather than cut to a stub. */
const MIN_TRUNCATED_CONTENT = 24;

/**
 * Renders one excerpt line as `N: escaped text`, at most `maxBytes` bytes (newline excluded).
 * A line that does not fit is cut between characters, before escaping, and ends with a marker
 * naming the bytes left out; labels and entities are never split. Returns null when not even the
 * label, marker and a short prefix fit.
 */
export function renderExcerptLine(entry: ExcerptLine, maxBytes: number): string | null {
	const label = `${entry.line}: `;
	const folded = entry.identical ? "identical lines" : "lines of this shape";
	const repeats = entry.repeats && entry.repeats > 1 ? ` [x${entry.repeats} ${folded}]` : "";
	const escaped = escapeXmlText(entry.text);
	const fullBytes = entry.bytes ?? utf8Bytes(entry.text);
	const capped = fullBytes > utf8Bytes(entry.text);
	const whole = label + escaped + repeats;
	if (!capped && utf8Bytes(whole) <= maxBytes) return whole;
	// The marker is sized for the largest possible count so the prefix computed under it always fits.
	const markerBytes = utf8Bytes(` ...[+${fullBytes} bytes]`);
	const room = maxBytes - utf8Bytes(label) - utf8Bytes(repeats) - markerBytes;
	if (room < Math.min(MIN_TRUNCATED_CONTENT, utf8Bytes(escaped))) return null;
	const prefix = escapedPrefix(entry.text, room);
	const omitted = fullBytes - prefix.rawBytes;
	if (omitted <= 0) return utf8Bytes(whole) <= maxBytes ? whole : null;
	return `${label}${prefix.escaped} ...[+${omitted} bytes]${repeats}`;
}

/**
 * Packs whole, escaped, labelled lines into a byte budget: lines are taken by priority (ties by
 * line number), each bounded by `maxLineBytes`, and the ones that fit are printed in original
 * line order. A line that no longer fits whole may go in truncated; nothing is ever split across
 * lines and the budget is never exceeded.
 */
export function packExcerpt(candidates: readonly ExcerptLine[], options: PackOptions): PackedExcerpt {
	const byLine = new Map<number, ExcerptLine>();
	for (const entry of candidates) {
		const known = byLine.get(entry.line);
		if (!known || entry.priority < known.priority) byLine.set(entry.line, entry);
	}
	const ordered = [...byLine.values()].sort((a, b) => a.priority - b.priority || a.line - b.line);
	let remaining = options.budget;
	const chosen: { line: number; rendered: string }[] = [];
	for (const entry of ordered) {
		if (remaining <= MIN_TRUNCATED_CONTENT) break;
		const bound = Math.min(options.maxLineBytes, remaining - 1);
		const rendered = renderExcerptLine(entry, bound);
		if (rendered === null) continue;
		chosen.push({ line: entry.line, rendered });
		remaining -= utf8Bytes(rendered) + 1;
	}
	chosen.sort((a, b) => a.line - b.line);
	const text = chosen.map((c) => `${c.rendered}\n`).join("");
	return { text, lines: chosen.map((c) => c.line), bytes: utf8Bytes(text) };
}
