import { closeSync, openSync, rmSync } from "node:fs";
import { rm, stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";

/** The lock could not be taken; the message names the lock file and what to do. */
export class LockError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "LockError";
	}
}

export interface LockOptions {
	/** What the lock guards, for messages (`the broker state`, `the task snapshot`). */
	what: string;
	/** Give up after waiting this long for another holder. */
	waitMs?: number;
	/** A lock file older than this was left by a process that died holding it, and is removed. */
	staleMs?: number;
}

/**
 * Runs `work` while holding `path`, a lock file created exclusively, so separate processes on one
 * session take turns. Never runs `work` unlocked: a lock that cannot be created, or is held past
 * `waitMs`, is a `LockError`. Hold it only around short read-modify-write steps.
 */
export async function withFileLock<T>(path: string, work: () => Promise<T>, options: LockOptions): Promise<T> {
	const waitMs = options.waitMs ?? 10_000;
	const staleMs = options.staleMs ?? 30_000;
	const deadline = Date.now() + waitMs;
	for (;;) {
		try {
			// Taken and released with synchronous calls: an uncontended lock costs two system calls, not two
			// thread-pool round trips, on the path of every observation.
			closeSync(openSync(path, "wx", 0o600));
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
				throw new LockError(`cannot lock ${options.what} (${path}): ${(error as Error).message}`);
			}
			const age = await stat(path).then(
				(info) => Date.now() - info.mtimeMs,
				() => 0,
			);
			if (age > staleMs) {
				await rm(path, { force: true });
				continue;
			}
			if (Date.now() > deadline) {
				throw new LockError(
					`${options.what} is locked by another process (${path}); if no other prime-context process is running, delete that file`,
				);
			}
			await sleep(5 + Math.random() * 20);
		}
	}
	try {
		return await work();
	} finally {
		rmSync(path, { force: true });
	}
}
