import { randomBytes } from "node:crypto";
import {
	closeSync,
	fsync,
	mkdirSync,
	openSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { type FileHandle, lstat, open, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ObservationRecord } from "../types.js";
import {
	type ChunkEntry,
	ChunkedGzipWriter,
	type ChunkIndex,
	ChunkReadError,
	chunkLines,
	chunkTextLines,
	lastLineOf,
	readChunks,
} from "./chunks.js";
import {
	checkSessionId,
	formatObservationId,
	OBSERVATION_ID,
	observationSequence,
	resolveContextRoot,
} from "./paths.js";
import {
	ArchiveError,
	type ArchiveWriter,
	type ObservationFacts,
	type ReadLinesOptions,
	type SessionArchive,
} from "./types.js";

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const OUTPUT_FILE = "output.gz";
/**
 * A session's new observation ids start after the sequence this file holds: a fork's start after
 * every id its parent showed, so an id in the parent's history never names an output of the fork.
 */
export const SEQUENCE_FLOOR_FILE = "sequence-floor";
const META_FILE = "meta.json";
const LIST_HINT = "list the archived ids with the list action (`prime-context list`)";

/** What `meta.json` holds: the public record plus the chunk index of `output.gz`. Written last, atomically. */
interface ObservationMeta {
	record: ObservationRecord;
	chunks: ChunkEntry[];
	endsWithNewline: boolean;
}

export interface OpenArchiveOptions {
	/** Storage root; defaults to `resolveContextRoot(process.env)`. */
	root?: string;
	sessionId: string;
}

/**
 * Opens (without creating anything yet) the archive of one session. Directories are created on the
 * first write, so reading, listing and cleanup work even where nothing can be written.
 */
export async function openSessionArchive(options: OpenArchiveOptions): Promise<SessionArchive> {
	const sessionId = checkSessionId(options.sessionId);
	const root = options.root ?? resolveContextRoot();
	return new DiskArchive(sessionId, join(root, "sessions", sessionId));
}

/**
 * The highest observation sequence of the archive in `dir`: its newest id, or the floor its ids
 * start after (`continueNumbering`), whichever is higher; 0 for an archive not written yet.
 */
export function lastSequence(dir: string): number {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
		throw error;
	}
	let highest = 0;
	for (const name of names) {
		const sequence = observationSequence(name);
		if (sequence !== null && sequence > highest) highest = sequence;
	}
	if (names.includes(SEQUENCE_FLOOR_FILE)) {
		const floor = Number.parseInt(readFileSync(join(dir, SEQUENCE_FLOOR_FILE), "utf8"), 10);
		if (Number.isSafeInteger(floor) && floor > highest) highest = floor;
	}
	return highest;
}

/** New observation ids of the archive in `dir` start after `sequence` (a fork continues its parent's numbering). */
export function continueNumbering(dir: string, sequence: number): void {
	mkdirSync(dir, { recursive: true, mode: DIR_MODE });
	writeFileSync(join(dir, SEQUENCE_FLOOR_FILE), `${sequence}\n`, { mode: FILE_MODE });
}

class DiskArchive implements SessionArchive {
	constructor(
		readonly sessionId: string,
		readonly dir: string,
	) {}

	/**
	 * The directory work is done with synchronous calls: a handful of metadata operations on a local
	 * disk take a fraction of a millisecond this way, and several times that as thread-pool round
	 * trips, on the path of every observation.
	 */
	async create(): Promise<ArchiveWriter> {
		try {
			mkdirSync(this.dir, { recursive: true, mode: DIR_MODE });
		} catch (error) {
			throw new ArchiveError(
				`cannot create the archive directory ${this.dir}: ${reason(error)}; set PRIME_CONTEXT_HOME to a writable directory`,
			);
		}
		const id = this.claimId();
		const obsDir = join(this.dir, id);
		let fd: number;
		try {
			fd = openSync(join(obsDir, OUTPUT_FILE), "wx", FILE_MODE);
		} catch (error) {
			throw new ArchiveError(`cannot write the archive of ${id}: ${reason(error)}`, id);
		}
		return new DiskWriter(id, obsDir, fd);
	}

	/** Claims the next free sequence number with an exclusive mkdir, retrying past ids taken meanwhile. */
	private claimId(): string {
		let next = this.highestSequence() + 1;
		for (;;) {
			const id = formatObservationId(next);
			try {
				mkdirSync(join(this.dir, id), { mode: DIR_MODE });
				return id;
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
					throw new ArchiveError(`cannot claim observation id ${id} in ${this.dir}: ${reason(error)}`, id);
				}
				next++;
			}
		}
	}

	private highestSequence(): number {
		try {
			return lastSequence(this.dir);
		} catch (error) {
			throw new ArchiveError(`cannot read the archive directory ${this.dir}: ${reason(error)}`);
		}
	}

	private async entries(): Promise<string[]> {
		try {
			return await readdir(this.dir);
		} catch (error) {
			if (["ENOENT", "ENOTDIR"].includes((error as NodeJS.ErrnoException).code ?? "")) return [];
			throw new ArchiveError(`cannot read the archive directory ${this.dir}: ${reason(error)}`);
		}
	}

	async get(id: string): Promise<ObservationRecord> {
		return (await this.meta(id)).record;
	}

	async list(limit = Number.POSITIVE_INFINITY): Promise<ObservationRecord[]> {
		const ids = (await this.entries())
			.filter((name) => OBSERVATION_ID.test(name))
			.sort((a, b) => (observationSequence(b) ?? 0) - (observationSequence(a) ?? 0));
		const records: ObservationRecord[] = [];
		for (const id of ids) {
			if (records.length >= limit) break;
			try {
				records.push((await this.meta(id)).record);
			} catch {
				// Aborted or still being written: not an observation (yet).
			}
		}
		return records;
	}

	async readLines(
		id: string,
		startLine: number,
		endLine: number,
		options: ReadLinesOptions = {},
	): Promise<{ lines: string[]; totalLines: number; lineBytes: number[] }> {
		if (!Number.isInteger(startLine) || !Number.isInteger(endLine) || startLine < 1 || endLine < startLine) {
			throw new ArchiveError(
				`invalid line range ${startLine}-${endLine} for ${id}: lines are 1-based and startLine <= endLine`,
				id,
			);
		}
		const meta = await this.meta(id);
		const totalLines = meta.record.lines;
		const lines: string[] = [];
		const lineBytes: number[] = [];
		if (startLine > totalLines) return { lines, totalLines, lineBytes };
		const last = Math.min(endLine, totalLines);
		const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
		// First chunk holding startLine, then back to where that line began.
		let from = meta.chunks.findIndex((chunk) => lastLineOf(chunk, meta.endsWithNewline) >= startLine);
		while (from > 0 && meta.chunks[from].startsMidLine) from--;
		await this.withOutput(id, async (handle) => {
			let collected = 0;
			const source = chunkLines(handle, meta.chunks, from, totalLines, startLine, options.maxLineBytes);
			for await (const { line, bytes, length } of source) {
				if (line > last || collected >= maxBytes) break;
				lines.push(bytes.toString("utf8"));
				lineBytes.push(length);
				collected += bytes.length;
			}
		});
		return { lines, totalLines, lineBytes };
	}

	async readBytes(id: string): Promise<Buffer> {
		const meta = await this.meta(id);
		let parts: Buffer[] = [];
		await this.withOutput(id, async (handle) => {
			parts = await readChunks(handle, meta.chunks);
		});
		return Buffer.concat(parts);
	}

	async *lines(id: string): AsyncIterable<{ line: number; text: string }> {
		const meta = await this.meta(id);
		const handle = await this.openOutput(id);
		try {
			yield* chunkTextLines(handle, meta.chunks, meta.record.lines);
		} catch (error) {
			throw damaged(id, error);
		} finally {
			await handle.close();
		}
	}

	async diskBytes(): Promise<number> {
		return sizeOf(this.dir);
	}

	async cleanup(): Promise<void> {
		try {
			await rm(this.dir, { recursive: true, force: true });
		} catch (error) {
			// A file where a parent directory should be: there is no archive to remove.
			if ((error as NodeJS.ErrnoException).code !== "ENOTDIR") throw error;
		}
	}

	private checkId(id: string): void {
		if (typeof id !== "string" || !OBSERVATION_ID.test(id)) {
			throw new ArchiveError(
				`invalid observation id ${JSON.stringify(id)}: ids look like obs_000001; ${LIST_HINT}`,
				typeof id === "string" ? id : undefined,
			);
		}
	}

	private async meta(id: string): Promise<ObservationMeta> {
		this.checkId(id);
		const obsDir = join(this.dir, id);
		let text: string;
		try {
			text = await readFile(join(obsDir, META_FILE), "utf8");
		} catch (error) {
			if (!["ENOENT", "ENOTDIR"].includes((error as NodeJS.ErrnoException).code ?? "")) {
				throw new ArchiveError(`cannot read the archive of ${id}: ${reason(error)}`, id);
			}
			const exists = await lstat(obsDir).then(
				() => true,
				() => false,
			);
			throw new ArchiveError(
				exists
					? `observation ${id} has no complete archive (it was aborted, is still being written, or its metadata is missing)`
					: `unknown observation id ${id} in session ${this.sessionId}; ${LIST_HINT}`,
				id,
			);
		}
		try {
			const meta = JSON.parse(text) as ObservationMeta;
			if (!meta || typeof meta.record !== "object" || !Array.isArray(meta.chunks)) throw new Error("unexpected shape");
			return meta;
		} catch (error) {
			throw new ArchiveError(`the metadata of observation ${id} is corrupted (${reason(error)})`, id);
		}
	}

	private async openOutput(id: string): Promise<FileHandle> {
		try {
			return await open(join(this.dir, id, OUTPUT_FILE), "r");
		} catch (error) {
			throw new ArchiveError(`the archived output of ${id} is missing or unreadable: ${reason(error)}`, id);
		}
	}

	private async withOutput(id: string, use: (handle: FileHandle) => Promise<void>): Promise<void> {
		const handle = await this.openOutput(id);
		try {
			await use(handle);
		} catch (error) {
			throw damaged(id, error);
		} finally {
			await handle.close();
		}
	}
}

const fsyncAsync = promisify(fsync);

class DiskWriter implements ArchiveWriter {
	private readonly gzip: ChunkedGzipWriter;
	private closed = false;
	/** Every byte is in the file; the sync to disk has started (`synced`). Started once. */
	private written: Promise<ChunkIndex> | null = null;
	private synced: Promise<void> | null = null;
	private fdClosed = false;

	constructor(
		readonly id: string,
		private readonly obsDir: string,
		private readonly fd: number,
	) {
		this.gzip = new ChunkedGzipWriter(fd);
	}

	async write(chunk: Buffer): Promise<void> {
		if (this.closed || this.written !== null)
			throw new ArchiveError(`observation ${this.id} is already sealed`, this.id);
		try {
			await this.gzip.write(chunk);
		} catch (error) {
			throw new ArchiveError(`cannot write the archive of ${this.id}: ${reason(error)}`, this.id);
		}
	}

	async flush(): Promise<void> {
		await this.writing().catch(() => {});
	}

	/** The last chunks compressed and written, then the sync to disk started (it runs on while the caller works). */
	private writing(): Promise<ChunkIndex> {
		if (this.written === null) {
			this.written = this.gzip.finish().then((index) => {
				this.synced = fsyncAsync(this.fd);
				// Reported by `finish`, which awaits it; until then it is not an unhandled rejection.
				this.synced.catch(() => {});
				return index;
			});
			this.written.catch(() => {});
		}
		return this.written;
	}

	private closeFile(): void {
		if (this.fdClosed) return;
		this.fdClosed = true;
		try {
			closeSync(this.fd);
		} catch {
			// Already closed (a failed write): nothing is left to release.
		}
	}

	async finish(facts: ObservationFacts): Promise<ObservationRecord> {
		if (this.closed) throw new ArchiveError(`observation ${this.id} is already sealed`, this.id);
		this.closed = true;
		try {
			const index = await this.writing();
			// The data is on disk before the metadata that makes it readable exists.
			await this.synced;
			this.closeFile();
			const record: ObservationRecord = {
				id: this.id,
				tool: facts.tool,
				source: facts.source,
				decision: facts.decision,
				bytes: index.bytes,
				lines: index.lines,
				isError: facts.isError,
				exitCode: facts.exitCode,
				command: facts.command,
				archivedAt: new Date().toISOString(),
				binary: index.binary,
			};
			const meta: ObservationMeta = { record, chunks: index.chunks, endsWithNewline: index.endsWithNewline };
			writeAtomicallySync(join(this.obsDir, META_FILE), JSON.stringify(meta));
			return record;
		} catch (error) {
			this.closeFile();
			throw new ArchiveError(`cannot seal the archive of ${this.id}: ${reason(error)}`, this.id);
		}
	}

	async abort(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		// Chunks still being compressed write to the file, and a started flush syncs it: let them end
		// before closing it (a closed descriptor's number may already name another file).
		await this.gzip.settled();
		await this.written?.catch(() => {});
		await this.synced?.catch(() => {});
		this.closeFile();
		// The directory stays so the id is never handed out twice; without meta.json it is not listed.
		await rm(join(this.obsDir, OUTPUT_FILE), { force: true });
	}
}

/** `writeAtomically` with synchronous calls, for the small files written on every observation's path. */
export function writeAtomicallySync(path: string, text: string): void {
	const temp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
	try {
		writeFileSync(temp, text, { mode: FILE_MODE, flag: "wx" });
		renameSync(temp, path);
	} catch (error) {
		try {
			rmSync(temp, { force: true });
		} catch {
			// The write's own failure is the one to report.
		}
		throw error;
	}
}

/** Writes `text` to a temp file beside `path` and renames it into place, so readers never see half a file. */
export async function writeAtomically(path: string, text: string): Promise<void> {
	writeAtomicallySync(path, text);
}

async function sizeOf(path: string): Promise<number> {
	let stats: Awaited<ReturnType<typeof lstat>>;
	try {
		stats = await lstat(path);
	} catch {
		return 0;
	}
	if (!stats.isDirectory()) return stats.size;
	let total = 0;
	for (const name of await readdir(path).catch(() => [] as string[])) total += await sizeOf(join(path, name));
	return total;
}

function damaged(id: string, error: unknown): ArchiveError {
	if (error instanceof ArchiveError) return error;
	if (error instanceof ChunkReadError) return new ArchiveError(`the archive of ${id} is damaged: ${error.message}`, id);
	return new ArchiveError(`cannot read the archive of ${id}: ${reason(error)}`, id);
}

function reason(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
