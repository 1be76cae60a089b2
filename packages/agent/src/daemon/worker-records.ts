import { existsSync } from "node:fs";
import { join } from "node:path";
import { type DiskWriteError, diskWriteError } from "../home/index.js";
import { type DaemonPaths, readWorkerRecord, type WorkerRecord, workerDir, writeWorkerRecord } from "./state.js";

/** How often records the disk refused are written again. */
const RETRY_MS = 2000;

/**
 * The supervisor's worker records. A record the disk refuses (full, read-only) never stops the
 * supervisor: it is kept in memory, served from there, and written again every few seconds until
 * the disk takes it; meanwhile `refusal` says why.
 */
export class WorkerRecords {
	private readonly unsaved = new Map<string, { record: WorkerRecord; refusal: DiskWriteError }>();
	private retry: NodeJS.Timeout | undefined;

	constructor(
		private readonly paths: DaemonPaths,
		private readonly log: (line: string) => void,
	) {}

	/** The record of `key`: the one the disk refused, if any, else the one on disk. */
	read(key: string): WorkerRecord | undefined {
		return this.unsaved.get(key)?.record ?? readWorkerRecord(this.paths, key);
	}

	/** Write `record`, or throw (a request's own write: the request fails with the disk's message). */
	save(record: WorkerRecord): void {
		writeWorkerRecord(this.paths, record);
		this.unsaved.delete(record.key);
	}

	/** Write `record`; one the disk refuses is kept (see the class). False when it was refused. */
	keep(record: WorkerRecord): boolean {
		try {
			this.save(record);
			return true;
		} catch (error) {
			const refusal = diskWriteError(
				error,
				join(workerDir(this.paths, record.key), "worker.json"),
				`\`prime-agent attach ${record.key}\` starts it again`,
			);
			if (!refusal) throw error;
			if (!this.unsaved.has(record.key)) this.log(`Agent ${record.key}: ${refusal.message}`);
			this.unsaved.set(record.key, { record, refusal });
			this.retry ??= setInterval(() => this.writeAgain(), RETRY_MS);
			return false;
		}
	}

	/** Why the record of `key` is not on disk yet (the disk's message and what to do), if it is not. */
	refusal(key: string): string | undefined {
		const refusal = this.unsaved.get(key)?.refusal;
		return refusal && `${refusal.message} ${refusal.hint}`;
	}

	/** How many records wait to be written. */
	get pending(): number {
		return this.unsaved.size;
	}

	close(): void {
		clearInterval(this.retry);
		this.retry = undefined;
	}

	private writeAgain(): void {
		for (const { record } of [...this.unsaved.values()]) {
			// Removed meanwhile (pruned, its home gone): nothing to write back.
			if (!existsSync(workerDir(this.paths, record.key))) this.unsaved.delete(record.key);
			else if (this.keep(record)) this.log(`Agent ${record.key}: its record is written again.`);
		}
		if (this.unsaved.size === 0) this.close();
	}
}
