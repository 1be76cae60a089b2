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
 * The text as a string of its own: a line cut from a 64 KiB chunk of text keeps that whole chunk
 * alive while it is held, so a table of lines held from many chunks would hold them all. (Slicing a
 * joined string copies it first.)
 */
export function ownCopy(text: string): string {
	return `${text} `.slice(0, -1);
}
