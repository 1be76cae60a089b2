/** Slots of a line-keyed table (a power of two). */
export const LINE_SLOTS = 4096;

/**
 * The slot of a line's text in a table of `LINE_SLOTS` recent lines: from its length and eight of its
 * characters, spread over the line (the ends hold what differs between repeated lines: line
 * numbers, counts). Much cheaper than hashing the whole text; two texts in one slot are told apart
 * by comparing them.
 */
export function lineSlot(text: string): number {
	const n = text.length;
	if (n === 0) return 0;
	let h = Math.imul(n, 0x9e3779b1);
	h = Math.imul(h ^ text.charCodeAt(0), 0x85ebca6b);
	h = Math.imul(h ^ text.charCodeAt(n >> 2), 0xc2b2ae35);
	h = Math.imul(h ^ text.charCodeAt(n >> 1), 0x85ebca6b);
	h = Math.imul(h ^ text.charCodeAt((n * 3) >> 2), 0xc2b2ae35);
	h = Math.imul(h ^ text.charCodeAt(n - 1), 0x85ebca6b);
	if (n > 2) h = Math.imul(h ^ text.charCodeAt(n - 2), 0xc2b2ae35);
	if (n > 3) h = Math.imul(h ^ text.charCodeAt(n - 3), 0x85ebca6b);
	if (n > 5) h = Math.imul(h ^ text.charCodeAt(n - 5), 0xc2b2ae35);
	return (h ^ (h >>> 15)) & (LINE_SLOTS - 1);
}

/**
 * What the outcome scanner remembers of a short line's text (see `OutcomeScanner.line`). A caller
 * that looks lines up in a table of its own can hold it there, so each line is looked up once.
 */
export interface LineMemo {
	/** The scanner's note on this text (0: none yet). */
	scan: number;
}

/**
 * A table of recent short lines, one per slot (see `lineSlot`). It is emptied whenever as many lines
 * were put in as it has slots: a line cut from a 64 KiB chunk of text keeps that whole chunk alive,
 * so lines kept indefinitely in rarely reused slots would hold chunk after chunk.
 */
export class LineTable<T> {
	private readonly texts: (string | undefined)[] = new Array(LINE_SLOTS);
	private readonly values: (T | undefined)[] = new Array(LINE_SLOTS);
	private puts = 0;

	/** The value stored with exactly this text, if it is still there. */
	get(text: string, slot: number): T | undefined {
		return this.texts[slot] === text ? this.values[slot] : undefined;
	}

	set(text: string, slot: number, value: T): void {
		if (++this.puts > LINE_SLOTS) {
			this.texts.fill(undefined);
			this.values.fill(undefined);
			this.puts = 1;
		}
		this.texts[slot] = text;
		this.values[slot] = value;
	}
}

/**
 * The text as a string of its own. A line is a view into the whole decoded piece of output it was
 * cut from (64 KiB), and so is any part of it: one kept for the rest of a long scan (a new shape, a
 * failing id, a kept line) would keep that piece alive with it. A scan of 1 MB of logs makes a few
 * thousand copies, about 2 ms: worth it only when nothing else holds the pieces.
 */
export function ownCopy(text: string): string {
	// V8 copies strings shorter than this whenever it cuts or joins them: they are never views.
	if (text.length < 13) return text;
	// Slicing a concatenation first copies it into one new string; the slice is a view of that copy.
	return ` ${text}`.slice(1);
}

/** What a scan applies to each string it keeps past its line: `ownCopy`, or nothing (see `copyKept`). */
export type Keep = (text: string) => string;

const keepAsIs: Keep = (text) => text;

/** `ownCopy` when the pieces are not held elsewhere (`copy`), else the string as it is. */
export function keeper(copy: boolean): Keep {
	return copy ? ownCopy : keepAsIs;
}
