import { randomUUID } from "node:crypto";
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { PRIVATE_FILE_MODE } from "../home/index.js";
import { isSameProcess, processStartId } from "./process-identity.js";

/** What every process lock records of its holder: the process, told apart from a later one with its pid. */
export interface ProcessLockHolder {
	pid: number;
	startId: string;
}

/**
 * The outcome of `takeProcessLock`: held (release it when done; a kill releases it too, as the
 * next taker finds its holder dead), or refused with the live holder's record. `holder` is absent
 * only when rivals kept replacing the lock while it was being read.
 */
export type ProcessLock<T> =
	| { taken: true; release(): void }
	| { taken: false; holder: (T & ProcessLockHolder) | undefined };

/**
 * Take the lock file at `path` for this process, recording `details` with the process's pid and
 * start identity. The lock appears with its content already in it (written aside, then hard-linked
 * into place, which fails when the lock exists), so a rival never reads an empty lock and takes it
 * as stale. A lock whose holder is gone (it exited or was killed, even with kill -9) is removed,
 * only if it is still that lock. A lock this very process holds is refused like any other.
 * A write the disk refuses throws its error as it is (the caller names what could not be written).
 */
export function takeProcessLock<T extends object>(path: string, details: T): ProcessLock<T> {
	const startId = processStartId(process.pid) ?? "";
	// The token tells this holding apart from another of the same process (release removes only its own).
	const text = JSON.stringify({ ...details, pid: process.pid, startId, token: randomUUID() });
	// Named as an atomic write's temp file, so that one left by a kill is cleaned up (see removeLeftoverTempFiles).
	const mine = `${path}.${process.pid}.tmp`;
	let holder: (T & ProcessLockHolder) | undefined;
	try {
		writeFileSync(mine, text, { mode: PRIVATE_FILE_MODE });
		for (let attempt = 0; attempt < 3; attempt++) {
			try {
				linkSync(mine, path);
				return { taken: true, release: () => releaseLock(path, text) };
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
				const seen = readText(path);
				holder = seen === undefined ? undefined : parseHolder<T>(seen);
				if (holder && isSameProcess(holder.pid, holder.startId)) return { taken: false, holder };
				// A rival may have replaced the dead holder's lock meanwhile.
				if (readText(path) === seen) rmSync(path, { force: true });
			}
		}
		return { taken: false, holder: undefined };
	} finally {
		rmSync(mine, { force: true });
	}
}

/** Remove the lock at `path` if it is still the one written as `text`. */
function releaseLock(path: string, text: string): void {
	if (readText(path) === text) rmSync(path, { force: true });
}

function readText(path: string): string | undefined {
	try {
		return readFileSync(path, "utf8");
	} catch {
		return undefined;
	}
}

function parseHolder<T>(text: string): (T & ProcessLockHolder) | undefined {
	try {
		const value = JSON.parse(text) as T & ProcessLockHolder;
		return typeof value === "object" && value !== null && typeof value.pid === "number" ? value : undefined;
	} catch {
		return undefined;
	}
}
