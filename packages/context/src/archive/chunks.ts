import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { gunzipSync, gzip } from "node:zlib";
import { TextCheck } from "./text-check.js";

const gzipAsync = promisify(gzip);

/** Uncompressed size a chunk aims for; it ends at the last newline inside that size when there is one. */
export const CHUNK_BYTES = 64 * 1024;

const NEWLINE = 0x0a;

/**
 * Level 1: logs compress about 15% less tightly than at the default 6 but several times faster, and
 * on two shared cores the compression competes with the scan for CPU.
 *
 * Each chunk's compression is set up and taken back on this thread (a zlib stream per chunk): a
 * small hash table (`memLevel` 4: 4 KB to set up and clear per chunk instead of 64 KB, members a
 * fraction of a percent larger or smaller on logs) and an output buffer that holds a whole member
 * (one round trip through the thread pool instead of one per 16 KiB of output) take about 1 ms less
 * of this thread per megabyte.
 */
const GZIP_OPTIONS = { level: 1, memLevel: 4, chunkSize: 80 * 1024 };

/**
 * One gzip member of an observation's `output.gz`. Members are concatenated, so the whole file is
 * one valid gzip stream, yet any chunk can be inflated alone from its offset.
 */
export interface ChunkEntry {
	/** Byte offset of the member in `output.gz`. */
	offset: number;
	/** Compressed length of the member. */
	length: number;
	/** Uncompressed length. */
	bytes: number;
	/** 1-based number of the line the chunk's first byte belongs to. */
	firstLine: number;
	/** Newline bytes inside the chunk. */
	newlines: number;
	/** The chunk continues a line begun in an earlier chunk (only happens for lines longer than a chunk). */
	startsMidLine: boolean;
}

export interface ChunkIndex {
	chunks: ChunkEntry[];
	bytes: number;
	/** Lines split on `\n`; a final `\n` ends the last line rather than starting an empty one. */
	lines: number;
	/** The content is not valid UTF-8 or holds NUL bytes. */
	binary: boolean;
	endsWithNewline: boolean;
}

/** The last line number a chunk holds bytes of. */
export function lastLineOf(entry: ChunkEntry, endsWithNewline: boolean): number {
	return endsWithNewline ? entry.firstLine + entry.newlines - 1 : entry.firstLine + entry.newlines;
}

function countNewlines(data: Buffer): number {
	let count = 0;
	let at = data.indexOf(NEWLINE);
	while (at !== -1) {
		count++;
		at = data.indexOf(NEWLINE, at + 1);
	}
	return count;
}

/**
 * Chunks cut but not yet written at most: while they are compressed (on the thread pool, side by
 * side) and written, the caller goes on with its own work (the broker scans the next lines); the
 * bound keeps memory flat (about 2 MiB). A compressed chunk is only taken in when this thread's event
 * loop turns, which a scan of text already in memory never lets it do: each time the queue is full
 * the scan waits for such a turn. Sixteen chunks are a megabyte, so most observations never wait.
 */
const QUEUED_CHUNKS = 16;

/** Compressed chunks are written to the file in batches of about this size: a few writes per megabyte. */
const WRITE_BATCH_BYTES = 256 * 1024;

/** Where a chunk sits in the stream; its offset and compressed length are known once it is written. */
type ChunkPlace = Omit<ChunkEntry, "offset" | "length">;

/**
 * Compresses a byte stream into line-aligned gzip members appended to the file `fd`, in order. Each
 * chunk is compressed on its own on the thread pool as soon as it is cut, so several compress side
 * by side while the caller goes on, and none waits for this thread's event loop to start it. The
 * compressed batches are written synchronously: a few page-cache writes per megabyte cost less than
 * a round trip through the thread pool each. Holds at most about one chunk of pending bytes,
 * `QUEUED_CHUNKS` chunks being compressed and a batch of compressed bytes beyond what the caller
 * passes in (it must not change a buffer after passing it). A failed compression or file write is
 * reported by the next `write` or by `finish`.
 */
export class ChunkedGzipWriter {
	private pending: Buffer[] = [];
	private pendingBytes = 0;
	private offset = 0;
	private nextLine = 1;
	private midLine = false;
	private totalBytes = 0;
	private lastByte = -1;
	private readonly chunks: ChunkEntry[] = [];
	private readonly text = new TextCheck();
	/** One promise per queued chunk, oldest first; each settles (never rejects) once its chunk is stored. */
	private readonly queue: Promise<void>[] = [];
	private failure: { error: unknown } | null = null;
	/** Compressed chunks placed in the file but not yet written (see `WRITE_BATCH_BYTES`). */
	private batch: Buffer[] = [];
	private batchBytes = 0;

	constructor(private readonly fd: number) {}

	async write(data: Buffer): Promise<void> {
		this.throwIfFailed();
		if (data.length === 0) return;
		this.text.push(data);
		this.pending.push(data);
		this.pendingBytes += data.length;
		this.totalBytes += data.length;
		this.lastByte = data[data.length - 1];
		while (this.pendingBytes >= CHUNK_BYTES) this.cutChunk();
		while (this.queue.length > QUEUED_CHUNKS) await this.queue[0];
		this.throwIfFailed();
	}

	/** Compresses and writes what is left; resolves with the index once every byte is in the file. */
	async finish(): Promise<ChunkIndex> {
		while (this.pendingBytes > 0) this.cutChunk();
		await this.settled();
		if (!this.failure) {
			try {
				this.writeBatch();
				// An empty observation still gets one (empty) member so the file is a valid gzip stream.
				if (this.chunks.length === 0) this.writeAll(await gzipAsync(Buffer.alloc(0), GZIP_OPTIONS));
			} catch (error) {
				this.failure = { error };
			}
		}
		this.throwIfFailed();
		this.text.end();
		const endsWithNewline = this.lastByte === NEWLINE;
		const lines = this.totalBytes === 0 ? 0 : this.nextLine - (endsWithNewline ? 1 : 0);
		return { chunks: this.chunks, bytes: this.totalBytes, lines, binary: this.text.binary, endsWithNewline };
	}

	/** Waits until every queued chunk is written or has failed; never throws. */
	async settled(): Promise<void> {
		await this.queue[this.queue.length - 1];
	}

	private throwIfFailed(): void {
		if (this.failure) throw this.failure.error;
	}

	/** Cuts the next chunk off the pending bytes (at its last newline when it has one) and queues it. */
	private cutChunk(): void {
		const data = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
		let cut = data.length;
		// `>=`, not `>`: a source read in exact 64 KiB pieces must still be cut at a newline, or every
		// chunk starts mid-line and a read near the end walks back through all of them.
		if (data.length >= CHUNK_BYTES) {
			const lastNewline = data.lastIndexOf(NEWLINE, CHUNK_BYTES - 1);
			cut = lastNewline === -1 ? CHUNK_BYTES : lastNewline + 1;
		}
		const chunk = data.subarray(0, cut);
		const rest = data.subarray(cut);
		this.pending = rest.length > 0 ? [rest] : [];
		this.pendingBytes = rest.length;

		const newlines = countNewlines(chunk);
		const place: ChunkPlace = { bytes: chunk.length, firstLine: this.nextLine, newlines, startsMidLine: this.midLine };
		this.nextLine += newlines;
		this.midLine = chunk[chunk.length - 1] !== NEWLINE;

		// Compression starts now, on the thread pool; the caller goes on scanning.
		const compressed = gzipAsync(chunk, GZIP_OPTIONS);
		// Its failure is reported in turn, by the store below; until then it is not an unhandled rejection.
		compressed.catch(() => {});
		const previous = this.queue[this.queue.length - 1] ?? Promise.resolve();
		this.queue.push(
			previous.then(async () => {
				try {
					const member = await compressed;
					if (!this.failure) this.store(member, place);
				} catch (error) {
					this.failure ??= { error };
				} finally {
					this.queue.shift();
				}
			}),
		);
	}

	/** Places a compressed chunk in the file; it is written with the batch it joins. */
	private store(compressed: Buffer, place: ChunkPlace): void {
		this.chunks.push({ offset: this.offset, length: compressed.length, ...place });
		this.offset += compressed.length;
		this.batch.push(compressed);
		this.batchBytes += compressed.length;
		if (this.batchBytes >= WRITE_BATCH_BYTES) this.writeBatch();
	}

	private writeBatch(): void {
		if (this.batch.length === 0) return;
		const data = this.batch.length === 1 ? this.batch[0] : Buffer.concat(this.batch, this.batchBytes);
		this.batch = [];
		this.batchBytes = 0;
		this.writeAll(data);
	}

	private writeAll(data: Buffer): void {
		let written = 0;
		while (written < data.length) written += writeSync(this.fd, data, written, data.length - written);
	}
}

/** Why a chunk could not be read back; the caller turns it into an error naming the observation. */
export class ChunkReadError extends Error {}

/** Inflates one chunk and checks it against its index entry, so damage never yields wrong bytes. */
export async function readChunk(handle: FileHandle, entry: ChunkEntry): Promise<Buffer> {
	const compressed = Buffer.alloc(entry.length);
	const { bytesRead } = await handle.read(compressed, 0, entry.length, entry.offset);
	if (bytesRead !== entry.length) {
		throw new ChunkReadError(`compressed data ends early (chunk at byte ${entry.offset})`);
	}
	let data: Buffer;
	try {
		// Inflated on this thread (a fraction of a millisecond per chunk). The asynchronous form goes
		// through Node's stream machinery, whose objects V8 allocates straight in the old generation once
		// a long-lived stream (the archive's compressor) has been busy: each inflated chunk then waited
		// for a full collection, and searching 100 MB grew the process by 50 MiB.
		data = gunzipSync(compressed);
	} catch (error) {
		throw new ChunkReadError(`compressed data is corrupted at byte ${entry.offset} (${(error as Error).message})`);
	}
	if (data.length !== entry.bytes) {
		throw new ChunkReadError(`chunk at byte ${entry.offset} holds ${data.length} bytes, index says ${entry.bytes}`);
	}
	return data;
}

/** Chunks read at once when a whole observation is read (the thread pool runs four reads by default). */
const PARALLEL_CHUNKS = 4;

/**
 * Reads every chunk, a few at a time on the thread pool, and inflates it, returned in order. With more
 * than one damaged chunk, the first in order is the one reported, as a one-by-one read would.
 */
export async function readChunks(handle: FileHandle, entries: ChunkEntry[]): Promise<Buffer[]> {
	const parts: Buffer[] = [];
	for (let at = 0; at < entries.length; at += PARALLEL_CHUNKS) {
		const window = entries.slice(at, at + PARALLEL_CHUNKS);
		const results = await Promise.allSettled(window.map((entry) => readChunk(handle, entry)));
		for (const result of results) {
			if (result.status === "rejected") throw result.reason;
			parts.push(result.value);
		}
	}
	return parts;
}

/**
 * Yields whole lines (without their `\n`) from `chunks[from]` on, inflating one chunk at a time.
 * Lines numbered below `skipBefore` are counted but not assembled, so skipping costs no memory.
 * A line longer than `maxLineBytes` is yielded clipped to that many bytes; `length` is its full size.
 */
export async function* chunkLines(
	handle: FileHandle,
	chunks: ChunkEntry[],
	from: number,
	totalLines: number,
	skipBefore = 1,
	maxLineBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<{ line: number; bytes: Buffer; length: number }> {
	if (from >= chunks.length) return;
	let line = chunks[from].firstLine;
	let partial: Buffer[] = [];
	let kept = 0;
	let length = 0;
	const keep = (piece: Buffer) => {
		length += piece.length;
		if (kept >= maxLineBytes) return;
		const part = piece.length > maxLineBytes - kept ? piece.subarray(0, maxLineBytes - kept) : piece;
		partial.push(part);
		kept += part.length;
	};
	const assembled = () => (partial.length === 1 ? partial[0] : Buffer.concat(partial));
	for (let index = from; index < chunks.length; index++) {
		const data = await readChunk(handle, chunks[index]);
		let start = 0;
		let at = data.indexOf(NEWLINE);
		while (at !== -1) {
			if (line >= skipBefore) {
				keep(data.subarray(start, at));
				yield { line, bytes: assembled(), length };
			}
			partial = [];
			kept = 0;
			length = 0;
			line++;
			start = at + 1;
			at = data.indexOf(NEWLINE, start);
		}
		if (start < data.length && line >= skipBefore) keep(data.subarray(start));
	}
	if (line <= totalLines && line >= skipBefore) yield { line, bytes: assembled(), length };
}

/**
 * Yields every line as text (without its `\n`), decoding each inflated chunk once: a line is a
 * slice of its chunk's text. Millions of short lines would otherwise each be a buffer view of their
 * own, and views that outlive a young collection keep whole inflated chunks alive until a full one.
 * A line split across chunks (longer than a chunk) is joined as bytes first, so a character cut by
 * the split decodes whole; each line decodes as it would alone (a newline is never part of a
 * multi-byte character).
 */
export async function* chunkTextLines(
	handle: FileHandle,
	chunks: ChunkEntry[],
	totalLines: number,
): AsyncGenerator<{ line: number; text: string }> {
	if (chunks.length === 0) return;
	let line = chunks[0].firstLine;
	/** Bytes of a line begun in an earlier chunk, joined once its end arrives. */
	let carry: Buffer[] = [];
	let carryBytes = 0;
	for (const entry of chunks) {
		const data = await readChunk(handle, entry);
		const last = data.lastIndexOf(NEWLINE);
		if (last === -1) {
			carry.push(data);
			carryBytes += data.length;
			continue;
		}
		const head = data.subarray(0, last);
		const whole = carryBytes === 0 ? head : Buffer.concat([...carry, head], carryBytes + head.length);
		// The rest of the chunk is copied, so the chunk itself is not held while its line goes on.
		carry = last + 1 < data.length ? [Buffer.from(data.subarray(last + 1))] : [];
		carryBytes = data.length - last - 1;
		const text = whole.toString("utf8");
		let start = 0;
		for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", start)) {
			yield { line: line++, text: text.slice(start, at) };
			start = at + 1;
		}
		yield { line: line++, text: start === 0 ? text : text.slice(start) };
	}
	if (line <= totalLines)
		yield { line, text: carryBytes === 0 ? "" : Buffer.concat(carry, carryBytes).toString("utf8") };
}
