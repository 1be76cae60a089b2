/** Bytes of `text` as UTF-8. */
export function byteLength(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes that does not split a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
	if (byteLength(text) <= maxBytes) return text;
	const bytes = Buffer.from(text.slice(0, maxBytes), "utf8");
	let end = Math.min(maxBytes, bytes.length);
	// Back off continuation bytes so the cut falls on a character boundary.
	while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
	return bytes.subarray(0, end).toString("utf8");
}

/**
 * A line for display within `maxBytes`. A longer line keeps its start, or with a `needle` the part
 * around the first match, and says how much was left out; lines are never split across outputs.
 * `fullBytes` is the line's real size when `text` is already a clipped prefix of it.
 */
export function displayLine(text: string, maxBytes: number, needle?: string, fullBytes?: number): string {
	const total = fullBytes ?? byteLength(text);
	if (total <= maxBytes) return text;
	const room = Math.max(16, maxBytes - 64);
	let start = 0;
	if (needle) {
		const at = text.toLowerCase().indexOf(needle);
		if (at > room / 4) start = at - Math.floor(room / 4);
	}
	const piece = truncateUtf8(text.slice(start), room);
	return `${start > 0 ? "…" : ""}${piece}… [line cut: ${total} bytes]`;
}

/** Accumulates response lines within a byte budget, keeping room for a closing note. */
export class BoundedText {
	private readonly lines: string[] = [];
	private bytes = 0;
	cut = false;

	constructor(
		private readonly maxBytes: number,
		/** Bytes held back for the final note. */
		private readonly reserve = 400,
	) {}

	/** Adds a line if it fits; returns false (and marks the text cut) if it does not. */
	add(line: string): boolean {
		const size = byteLength(line) + 1;
		if (this.bytes + size > this.maxBytes - this.reserve) {
			this.cut = true;
			return false;
		}
		this.lines.push(line);
		this.bytes += size;
		return true;
	}

	/** Bytes still free for lines (not counting the reserve). */
	room(): number {
		return this.maxBytes - this.reserve - this.bytes - 1;
	}

	/** The text with a closing note; the note is cut too if it alone would break the budget. */
	finish(note?: string): string {
		const body = this.lines.join("\n");
		if (!note) return body;
		const text = body ? `${body}\n${note}` : note;
		return byteLength(text) <= this.maxBytes ? text : truncateUtf8(text, this.maxBytes);
	}
}

export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
	return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
