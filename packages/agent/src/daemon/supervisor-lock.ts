import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { writingTo } from "../home/index.js";
import { isSameProcess, processStartId } from "./state.js";

/**
 * Take the supervisor lock at `path` (one supervisor per agent home). The lock appears with its
 * content already in it (written aside, then hard-linked into place, which fails when the lock
 * exists): a rival never reads an empty lock and takes it as stale. A lock left by a supervisor
 * that died (kill -9) is removed, only if it is still that lock. Returns whether this process holds it;
 * a disk that refuses the write is a `DiskWriteError` naming the lock (and leaves no file behind).
 */
export function takeSupervisorLock(path: string): boolean {
	const me = JSON.stringify({ pid: process.pid, startId: processStartId(process.pid) });
	// Named as an atomic write's temp file, so that one left by a kill is cleaned up (see removeLeftoverTempFiles).
	const mine = `${path}.${process.pid}.tmp`;
	try {
		writingTo(path, () => writeFileSync(mine, me, { mode: 0o600 }), "start it again (any `prime-agent` command does)");
		for (let attempt = 0; attempt < 3; attempt++) {
			try {
				linkSync(mine, path);
				return true;
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
				const seen = readText(path);
				const holder = seen === undefined ? undefined : parseHolder(seen);
				if (holder && isSameProcess(holder.pid, holder.startId)) return false;
				// A rival may have replaced the dead supervisor's lock meanwhile.
				if (readText(path) === seen) rmSync(path, { force: true });
			}
		}
		return false;
	} finally {
		rmSync(mine, { force: true });
	}
}

function readText(path: string): string | undefined {
	try {
		return readFileSync(path, "utf8");
	} catch {
		return undefined;
	}
}

function parseHolder(text: string): { pid: number; startId: string } | undefined {
	try {
		return JSON.parse(text) as { pid: number; startId: string };
	} catch {
		return undefined;
	}
}
