import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isSameProcess, processStartId } from "./state.js";

/**
 * Take the supervisor lock at `path` (one supervisor per agent home). The lock appears with its
 * content already in it (written aside, then hard-linked into place, which fails when the lock
 * exists): a rival never reads an empty lock and takes it as stale. A lock left by a supervisor
 * that died (kill -9) is removed, only if it is still that lock. Returns whether this process holds it.
 */
export function takeSupervisorLock(path: string): boolean {
	const me = JSON.stringify({ pid: process.pid, startId: processStartId(process.pid) });
	const mine = `${path}.${process.pid}`;
	writeFileSync(mine, me, { mode: 0o600 });
	try {
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
