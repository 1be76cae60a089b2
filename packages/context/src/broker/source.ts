import type { Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import { incompleteTail } from "../archive/text-check.js";
import { notePlain } from "../outcome/ansi.js";
import type { ObservationInput, ObservationSource } from "../types.js";

/** Characters of a line kept for classification and excerpts; the rest is only counted. */
export const LINE_KEEP_BYTES = 4096;
/** Observations up to this size are also held whole, for exact comparison and deltas. */
export const BODY_MAX_BYTES = 1024 * 1024;
const READ_CHUNK = 64 * 1024;

/** Where an observation's text comes from: a re-readable stream of its exact bytes. */
export interface ObservationSourceStream {
	source: ObservationSource;
	/**
	 * The caller holds the whole text in memory for the observation (a visible text): lines cut from it
	 * may be kept as they are. Lines of a stream read in pieces are views of pieces that would otherwise
	 * be freed, so what a scan keeps of them is copied (see `ownCopy`).
	 */
	heldInMemory: boolean;
	/** At least this many bytes will come (a file's size, a visible text's length in characters), known before reading. */
	sizeHint: number;
	/** Each chunk is a buffer of its own that nothing changes afterwards (readers may keep it). */
	chunks(): AsyncIterable<Buffer>;
	/**
	 * Whether a second read gives the bytes of the first: a file is still the one opened (same device,
	 * inode, size and modification time). Absent: always (a visible text never changes).
	 */
	unchanged?(): Promise<boolean>;
	/**
	 * The text the bytes decode to, held by the source, once `chunks` was read to its end: a visible
	 * text is its own decoding unless it held a lone surrogate (its bytes decode to U+FFFD there).
	 * Absent or null: decode the bytes.
	 */
	decoded?(): string | null;
}

async function* fileChunks(path: string): AsyncIterable<Buffer> {
	const handle = await open(path, "r");
	try {
		for (;;) {
			const buffer = Buffer.allocUnsafe(READ_CHUNK);
			const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, null);
			if (bytesRead === 0) return;
			yield buffer.subarray(0, bytesRead);
		}
	} finally {
		await handle.close();
	}
}

/**
 * The two-byte text each chunk of a visible-text source was encoded from (see `LineSplitter`): the
 * splitter need not decode those bytes again (weakly held: it goes with the chunk).
 */
const chunkTexts = new WeakMap<Buffer, string>();

/** What `textChunks` saw: some piece's bytes hold U+FFFD (the text may have a lone surrogate). */
interface TextChunksSeen {
	replacement: boolean;
}

function* textChunks(text: string, seen: TextChunksSeen): Iterable<Buffer> {
	// A one-byte string is cut into pieces small enough to be made two-byte cheaply (`twoByte`).
	const oneByte = !PAST_LATIN1.test(text);
	const step = oneByte ? TWO_BYTE_PIECE : READ_CHUNK;
	let at = 0;
	while (at < text.length) {
		let end = Math.min(text.length, at + step);
		// Never separate a surrogate pair: it would encode as two replacement characters.
		const last = text.charCodeAt(end - 1);
		if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
		const piece = text.slice(at, end);
		const bytes = Buffer.from(piece, "utf8");
		// A lone surrogate is encoded as U+FFFD (its bytes are those of one): lines show what the bytes
		// decode to, as they do when the same bytes are read from a file.
		const replacement = !oneByte && bytes.includes(REPLACEMENT);
		if (replacement) seen.replacement = true;
		const shown = oneByte ? twoByte(piece) : replacement ? wellFormed(piece) : piece;
		chunkTexts.set(bytes, shown);
		yield bytes;
		at = end;
	}
}

/** U+FFFD in UTF-8: what a lone surrogate is encoded as. */
const REPLACEMENT = Buffer.from("\ufffd", "utf8");

/** The text with each lone surrogate replaced by U+FFFD (Node 20 has the method; its types come with ES2024). */
const wellFormed = (text: string): string => (text as unknown as { toWellFormed(): string }).toWellFormed();

/** No lone surrogate (Node 20 has the method; its types come with ES2024). */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** The visible text as a source. */
export function visibleTextSource(text: string): ObservationSourceStream {
	const seen: TextChunksSeen = { replacement: false };
	return {
		source: "visible-tool-result",
		heldInMemory: true,
		sizeHint: text.length,
		async *chunks() {
			yield* textChunks(text, seen);
		},
		// Only a text whose bytes hold U+FFFD needs the search for lone surrogates (a pass over all of it).
		decoded: () => (seen.replacement && !isWellFormed(text) ? null : text),
	};
}

/**
 * The tool's complete output file when it is readable (labelled `public-complete-output`),
 * otherwise the visible text.
 */
export async function openObservationSource(input: ObservationInput): Promise<ObservationSourceStream> {
	const path = input.fullOutputPath;
	if (path) {
		try {
			const handle = await open(path, "r");
			const info = await handle.stat();
			await handle.close();
			if (info.isFile()) {
				const identity = (file: Stats) => `${file.dev}:${file.ino}:${file.size}:${file.mtimeMs}`;
				const opened = identity(info);
				return {
					source: "public-complete-output",
					heldInMemory: false,
					sizeHint: info.size,
					chunks: () => fileChunks(path),
					unchanged: () =>
						stat(path).then(
							(now) => identity(now) === opened,
							() => false,
						),
				};
			}
		} catch {
			// Unreadable: fall back to the visible text, as the seed says.
		}
	}
	return visibleTextSource(input.text);
}

/**
 * Splits a byte stream into lines on `\n` (a final `\n` ends the last line), keeping at most
 * `LINE_KEEP_BYTES` characters of each line, so a single 10 MB line costs no more memory than a
 * short one. `bytes` is the whole line's UTF-8 size, taken from newline positions in the bytes
 * (a newline byte is never part of a multi-byte character, so text and bytes split alike).
 *
 * A line redrawn with carriage returns (a progress bar) is kept as its final frame that shows
 * something (not empty, not colour changes only), marked by a leading `\r`: that is what a terminal
 * shows, and it may lie far past the first 4 KiB.
 *
 * Every line is cut from two-byte text (see `twoByte`): the scanners' string calls
 * (`charCodeAt`, `includes`, `trim`...) run fast for at most four kinds of string, and lines of
 * one-byte and two-byte texts together are more kinds than that. A process that had seen both
 * scanned every later observation about 25% slower.
 */
export class LineSplitter {
	/** Bytes of a character split between chunks, waiting for the rest. */
	private carry: Buffer | null = null;
	private partial = "";
	private partialBytes = 0;
	private capped = false;
	/** A carriage return was seen with no text after it yet: the next text starts a new frame. */
	private pendingFrame = false;
	/** The frame before the current one, shown instead when the current one only changes colours. */
	private previous = "";
	private lineNo = 0;

	constructor(private readonly emit: (text: string, lineNo: number, bytes: number) => void) {}

	push(input: Buffer): void {
		// A chunk cut from a string on a character boundary is that string: no decoding needed.
		const text = chunkTexts.get(input);
		if (text !== undefined) {
			this.pushText(input, text);
			return;
		}
		for (let at = 0; at < input.length; at += TWO_BYTE_PIECE) {
			this.pushBytes(input.subarray(at, Math.min(input.length, at + TWO_BYTE_PIECE)));
		}
	}

	/**
	 * Decodes bytes up to their last whole character (a plain `toString` is several times faster than
	 * a StringDecoder); the unfinished character waits for the next piece.
	 */
	private pushBytes(input: Buffer): void {
		const bytes = this.carry === null ? input : Buffer.concat([this.carry, input]);
		const cut = bytes.length - incompleteTail(bytes);
		this.carry = cut < bytes.length ? Buffer.from(bytes.subarray(cut)) : null;
		const chunk = bytes.subarray(0, cut);
		const text = chunk.toString("utf8");
		// Decoded text is one-byte exactly when no character is past U+00FF (always so for ASCII).
		this.pushText(chunk, text.length === chunk.length || !PAST_LATIN1.test(text) ? twoByte(text) : text);
	}

	/** Splits `text`, decoded from exactly the bytes `chunk`, into lines. */
	private pushText(chunk: Buffer, text: string): void {
		// Next carriage return, and next escape of either kind, at or after `start` (-1: none left): each
		// found once per occurrence, not searched for per line.
		let nextReturn = text.indexOf("\r");
		let nextEscape = text.indexOf("\u001b");
		let nextCsi = text.indexOf("\u009b");
		// A chunk with as many bytes as characters has one byte per character: its newlines sit at the same
		// positions in the text and in the bytes, so the bytes need no search of their own.
		const ascii = chunk.length === text.length;
		let start = 0;
		let byteStart = 0;
		for (;;) {
			const nl = text.indexOf("\n", start);
			if (nl === -1) break;
			const byteNl = ascii ? nl : chunk.indexOf(0x0a, byteStart);
			const bytes = this.partialBytes + (byteNl - byteStart);
			if (nextReturn !== -1 && nextReturn < start) nextReturn = text.indexOf("\r", start);
			const framed = nextReturn !== -1 && nextReturn < nl;
			if (this.partial === "" && this.partialBytes === 0) {
				if (framed) this.emit(lastFrameOf(text.slice(start, nl)), ++this.lineNo, bytes);
				else {
					const end = nl - start > LINE_KEEP_BYTES ? start + LINE_KEEP_BYTES : nl;
					const line = text.slice(start, end);
					if (nextEscape !== -1 && nextEscape < start) nextEscape = text.indexOf("\u001b", start);
					if (nextCsi !== -1 && nextCsi < start) nextCsi = text.indexOf("\u009b", start);
					if ((nextEscape === -1 || nextEscape >= end) && (nextCsi === -1 || nextCsi >= end)) notePlain(line);
					this.emit(line, ++this.lineNo, bytes);
				}
			} else {
				this.append(text.slice(start, nl));
				this.emit(this.shown(), ++this.lineNo, bytes);
				this.partial = "";
				this.previous = "";
				this.capped = false;
			}
			this.pendingFrame = false;
			this.partialBytes = 0;
			start = nl + 1;
			byteStart = byteNl + 1;
		}
		if (start < text.length) this.append(start === 0 ? text : text.slice(start));
		this.partialBytes += chunk.length - byteStart;
	}

	private append(piece: string): void {
		if (!piece.includes("\r")) {
			this.appendFrame(piece);
			return;
		}
		const frames = piece.split("\r");
		for (const [index, frame] of frames.entries()) {
			if (index > 0) this.pendingFrame = true;
			this.appendFrame(frame);
		}
	}

	/** The current frame is colour changes only (a frame after a `\r` that redraws nothing). */
	private colourFrame(): boolean {
		return this.partial.charCodeAt(0) === 13 && colourOnly(this.partial.slice(1));
	}

	/** What the line shows: its current frame, or the one before when the current one redraws nothing. */
	private shown(): string {
		return this.colourFrame() ? this.previous : this.partial;
	}

	private appendFrame(piece: string): void {
		if (piece === "") return;
		if (this.pendingFrame) {
			if (!this.colourFrame()) this.previous = this.partial;
			this.partial = "\r";
			this.capped = false;
			this.pendingFrame = false;
		}
		if (this.capped) return;
		const room = LINE_KEEP_BYTES - this.partial.length;
		if (piece.length <= room) this.partial += piece;
		else {
			this.partial += piece.slice(0, room);
			this.capped = true;
		}
	}

	/** Emits the last line when the text does not end with a newline; returns the line count. */
	end(): number {
		if (this.carry !== null) {
			// An unfinished character at the very end: its bytes are invalid, shown as U+FFFD.
			this.append(this.carry.toString("utf8"));
			this.partialBytes += this.carry.length;
			this.carry = null;
		}
		if (this.partial !== "" || this.partialBytes > 0) this.emit(this.shown(), ++this.lineNo, this.partialBytes);
		this.partial = "";
		this.previous = "";
		this.partialBytes = 0;
		this.pendingFrame = false;
		return this.lineNo;
	}
}

/**
 * Bytes decoded, or one-byte characters made two-byte, at a time. Two-byte text takes two bytes per
 * character, and V8 gives a string over 128 KiB fresh memory pages of its own: 64 KiB of ASCII made
 * two-byte at once cost about 8 ms per MB, 32 KiB at a time well under 1.
 */
const TWO_BYTE_PIECE = 32 * 1024;

/** A character past U+00FF: V8 stores a string holding one as two-byte text, and every slice of it. */
const PAST_LATIN1 = /[\u0100-\uffff]/;

/**
 * One-byte text as a two-byte string of the same characters: the concatenation with a two-byte
 * character is copied into one two-byte string when sliced, and the slice is a view of that copy.
 */
function twoByte(oneByte: string): string {
	return oneByte === "" ? oneByte : `\u0100${oneByte}`.slice(1);
}

/** Colour changes only (SGR escapes): after a carriage return they redraw nothing (git ends a highlighted `\r` so). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: colour escapes are what is matched.
const COLOUR_ONLY = /^(?:\u001b\[[0-9;:]*m)+$/;
const colourOnly = (frame: string): boolean => frame.charCodeAt(0) === 27 && COLOUR_ONLY.test(frame);

/**
 * What `LineSplitter.append` leaves of a whole line redrawn with carriage returns, without building
 * every frame: its last frame that shows something (not empty, not colour changes only), marked by a
 * leading `\r` unless it is the first frame. A frame is judged by its kept part, as `append` judges
 * it, so a line gives the same text however the output was cut into pieces.
 */
function lastFrameOf(line: string): string {
	let end = line.length;
	while (end > 0) {
		const cr = line.lastIndexOf("\r", end - 1);
		if (cr === -1) return end > LINE_KEEP_BYTES ? line.slice(0, LINE_KEEP_BYTES) : line.slice(0, end);
		const kept = line.slice(cr + 1, Math.min(end, cr + LINE_KEEP_BYTES));
		if (kept !== "" && !colourOnly(kept)) return `\r${kept}`;
		end = cr;
	}
	return "";
}

/** Two byte streams are equal over their first `bytes` bytes (callers compare sizes first). */
export async function streamsEqual(
	a: AsyncIterable<Buffer>,
	b: AsyncIterable<Buffer>,
	bytes: number,
): Promise<boolean> {
	const left = a[Symbol.asyncIterator]();
	const right = b[Symbol.asyncIterator]();
	let l: Buffer = Buffer.alloc(0);
	let r: Buffer = Buffer.alloc(0);
	let compared = 0;
	try {
		while (compared < bytes) {
			if (l.length === 0) {
				const next = await left.next();
				if (next.done) return false;
				l = next.value;
			}
			if (r.length === 0) {
				const next = await right.next();
				if (next.done) return false;
				r = next.value;
			}
			const n = Math.min(l.length, r.length, bytes - compared);
			if (!l.subarray(0, n).equals(r.subarray(0, n))) return false;
			l = l.subarray(n);
			r = r.subarray(n);
			compared += n;
		}
		return true;
	} finally {
		await left.return?.();
		await right.return?.();
	}
}
