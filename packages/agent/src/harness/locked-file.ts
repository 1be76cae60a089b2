import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ensurePrivateDir, PRIVATE_DIR_MODE, writePrivateJson } from "../home/index.js";

/** A lock older than this is taken to belong to a process that died holding it. */
const STALE_LOCK_MS = 10_000;
/** Give up waiting for a lock after this long. */
const LOCK_WAIT_MS = 5_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Run `work` holding `<path>.lock`, a directory made with `mkdir` (atomic on POSIX), which the
 * kernel's `prime_agent_runtime.harness` takes the same way: a read-modify-write from one process
 * never loses another's write. Work under the lock is short and synchronous.
 */
export function withFileLock<T>(path: string, work: () => T): T {
	const lock = `${path}.lock`;
	ensurePrivateDir(dirname(path));
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (;;) {
		try {
			mkdirSync(lock, { mode: PRIVATE_DIR_MODE });
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
			if (lockAge(lock) > STALE_LOCK_MS && breakStaleLock(lock)) continue;
			if (Date.now() > deadline) {
				throw new Error(
					`${lock} has been held for more than ${LOCK_WAIT_MS / 1000} s; if no prime-agent is writing the harness, remove that folder.`,
				);
			}
			Atomics.wait(sleeper, 0, 0, 10);
		}
	}
	try {
		return work();
	} finally {
		removeLock(lock);
	}
}

/**
 * Remove a lock left by a dead process, holding `<lock>.break` (made with `mkdir` too) while its
 * age is checked again: two processes that both saw it stale never remove the lock one of them has
 * just taken. False while another process is breaking it. The kernel breaks locks the same way.
 */
function breakStaleLock(lock: string): boolean {
	const breaker = `${lock}.break`;
	try {
		mkdirSync(breaker, { mode: PRIVATE_DIR_MODE });
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
		// Left by a process that died while breaking the lock.
		if (lockAge(breaker) > STALE_LOCK_MS) removeLock(breaker);
		return false;
	}
	try {
		if (lockAge(lock) > STALE_LOCK_MS) removeLock(lock);
	} finally {
		removeLock(breaker);
	}
	return true;
}

function lockAge(lock: string): number {
	try {
		return Date.now() - statSync(lock).mtimeMs;
	} catch {
		return 0;
	}
}

function removeLock(lock: string): void {
	try {
		rmdirSync(lock);
	} catch {
		// Already gone (another process broke a stale lock).
	}
}

/** Identity of a file's current content (atomic renames change the inode): null while missing. */
export function fileSignature(path: string): string | null {
	try {
		const stat = statSync(path);
		return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
	} catch {
		return null;
	}
}

/**
 * A JSON file several processes read and write: parsed again only when its signature changed
 * (another process may have written it under a running session), written atomically with
 * user-only permissions under the lock.
 */
export class SharedJsonFile<T> {
	private cache: { signature: string | null; value: T } | undefined;

	constructor(
		readonly path: string,
		private readonly parse: (raw: unknown, path: string) => T,
		private readonly empty: () => T,
	) {}

	/** The current content (re-read when the file changed since the last read). */
	read(): T {
		const signature = fileSignature(this.path);
		if (this.cache && this.cache.signature === signature) return this.cache.value;
		return this.readAfresh(signature);
	}

	private readAfresh(signature: string | null): T {
		const value = signature === null ? this.empty() : this.parse(parseJson(this.path), this.path);
		this.cache = { signature, value };
		return value;
	}

	/** The signature seen by the last read (to tell whether anything changed since). */
	get signature(): string | null {
		return fileSignature(this.path);
	}

	/**
	 * Read fresh under the lock, let `change` edit a copy, and write it when `change` returns
	 * `write: true`. Returns what `change` returned as `result`. The file is parsed again whatever
	 * its signature says: a file system with coarse times can show another process's write (same
	 * size, the freed inode reused) with the old signature, and writing the cached copy would lose it.
	 */
	update<R>(change: (value: T) => { write: boolean; result: R }): R {
		return withFileLock(this.path, () => {
			const current = structuredClone(this.readAfresh(fileSignature(this.path)));
			const { write, result } = change(current);
			if (write) {
				writePrivateJson(this.path, current);
				this.cache = { signature: fileSignature(this.path), value: current };
			}
			return result;
		});
	}
}

function parseJson(path: string): unknown {
	const text = existsSync(path) ? readFileSync(path, "utf8") : "";
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new Error(
			`${path} is not valid JSON (${(error as Error).message}); fix it by hand or move it aside (the harness starts empty without it).`,
		);
	}
}
