import type { Decision, ObservationRecord, ObservationSource } from "../types.js";

/** Raised for a bad or unknown id, or a missing or corrupted archive part. The message names the id. */
export class ArchiveError extends Error {
	constructor(
		message: string,
		readonly id?: string,
	) {
		super(message);
		this.name = "ArchiveError";
	}
}

/** Fields the writer of an observation supplies when it finishes; the archive fills in the rest. */
export interface ObservationFacts {
	tool: string;
	source: ObservationSource;
	decision: Decision;
	isError: boolean;
	exitCode: number | null;
	command: string | null;
}

/**
 * Streams one observation's exact bytes into the archive. Memory stays bounded whatever the size:
 * bytes are compressed in line-aligned chunks as they arrive.
 */
export interface ArchiveWriter {
	readonly id: string;
	write(chunk: Buffer): Promise<void>;
	/**
	 * After the last `write`: resolves once what was still buffered is in the file, and starts syncing
	 * it to disk. `finish` does this itself; calling it first lets the sync overlap other work. Never
	 * rejects: failures are reported by `finish`.
	 */
	flush(): Promise<void>;
	/** Seals the observation; after this it is readable and never changes. */
	finish(facts: ObservationFacts): Promise<ObservationRecord>;
	/** Drops a half-written observation (e.g. the disk filled up). */
	abort(): Promise<void>;
}

export interface ReadLinesOptions {
	/** Longest part of a line returned; a clipped line may end inside a UTF-8 character. */
	maxLineBytes?: number;
	/** Stop after the line that brings the returned bytes to this total. */
	maxBytes?: number;
}

/**
 * The exact archive of one session, under `<root>/sessions/<session-id>/`, user-only permissions,
 * never deleted automatically. Line numbers are 1-based; lines are split on `\n`.
 */
export interface SessionArchive {
	readonly sessionId: string;
	readonly dir: string;
	/** Claims the next observation id (safe against concurrent processes on the same session). */
	create(): Promise<ArchiveWriter>;
	get(id: string): Promise<ObservationRecord>;
	/** Newest first. */
	list(limit?: number): Promise<ObservationRecord[]>;
	/**
	 * Lines `startLine..endLine` inclusive, decompressing only the chunks that hold them. With
	 * `options`, memory stays bounded whatever the lines: a line is clipped to `maxLineBytes` (its
	 * full size is in `lineBytes`) and reading stops once `maxBytes` have been collected.
	 */
	readLines(
		id: string,
		startLine: number,
		endLine: number,
		options?: ReadLinesOptions,
	): Promise<{ lines: string[]; totalLines: number; lineBytes?: number[] }>;
	/** The exact bytes (use for byte-exact checks and small observations). */
	readBytes(id: string): Promise<Buffer>;
	/** Streams the lines of an observation in order, with bounded memory. */
	lines(id: string): AsyncIterable<{ line: number; text: string }>;
	/** Bytes the archive occupies on disk. */
	diskBytes(): Promise<number>;
	/** Removes this session's archive (and nothing else). */
	cleanup(): Promise<void>;
}
