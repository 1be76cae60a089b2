import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { ensurePrivateDir, writingTo } from "../home/index.js";
import { type ProcessLockHolder, takeProcessLock } from "../process-lock/index.js";

/** Who runs a session, as its lock records it for a second run to name. */
export interface SessionHolder {
	/** The agent running it: `root`, or a sub-agent's name. */
	agent: string;
	/** The background daemon's agent key, when one of its workers runs it. */
	daemonAgent?: string;
}

/** What the lock file holds: the holder, the session and since when (ISO time), and the process. */
type LockRecord = SessionHolder & { session: string; since: string } & ProcessLockHolder;

/** A session this process runs; `release` when its run ends (a process that dies releases it too). */
export interface SessionLock {
	release(): void;
}

/**
 * The lock file of the session file at `sessionFile`: `<id>.lock` beside `<id>.jsonl`, beside its
 * real file when it is named through a symbolic link (one session however it is named).
 */
export function sessionLockPath(sessionFile: string): string {
	let real = sessionFile;
	try {
		real = realpathSync(sessionFile);
	} catch {
		// Not written yet: a new session's file is made where it is named.
	}
	return `${real.replace(/\.jsonl$/, "")}.lock`;
}

/**
 * Take the session `id` at `sessionFile` for this process: two runs of one session would both
 * write its file and its kernel-state folder, each appending under its own idea of the branch. A
 * session another live process runs (or this one, through another run) is a `UserError` naming
 * that agent and process and saying what to do; a holder that died no longer holds it. `ref` names
 * the session in that advice; a disk that refuses the lock is a `DiskWriteError` about the session
 * file, saying `retry`.
 */
export function lockSession(
	sessionFile: string,
	id: string,
	holder: SessionHolder,
	advice: { ref: string; retry: string },
): SessionLock {
	const path = sessionLockPath(sessionFile);
	const lock = writingTo(
		sessionFile,
		() => {
			ensurePrivateDir(dirname(path));
			return takeProcessLock<Omit<LockRecord, keyof ProcessLockHolder>>(path, {
				...holder,
				session: id,
				since: new Date().toISOString(),
			});
		},
		advice.retry,
	);
	if (lock.taken) return lock;
	throw sessionInUse(advice.ref, path, lock.holder);
}

function sessionInUse(ref: string, path: string, holder: LockRecord | undefined): UserError {
	const fork = `or go on from a copy of it beside that run: \`prime-agent --fork ${ref}\``;
	if (!holder) {
		return new UserError(
			`Session ${ref} is in use: other prime-agent processes kept taking its lock (${path}).`,
			`Wait for them to end, then resume it again; ${fork}.`,
			ExitCode.usage,
		);
	}
	const since = `since ${String(holder.since).replace("T", " ").slice(0, 19)} UTC`;
	const agent = holder.agent === "root" ? "" : `sub-agent "${holder.agent}" of `;
	const clash = "two runs of one session would write into each other's conversation and kernel state.";
	if (holder.daemonAgent) {
		return new UserError(
			`Session ${ref} is in use by ${agent}background agent ${holder.daemonAgent} (process ${holder.pid}, ${since}): ${clash}`,
			`Join that run with \`prime-agent attach ${holder.daemonAgent}\`, or stop it with \`prime-agent shutdown ${holder.daemonAgent}\` and resume again; ${fork}.`,
			ExitCode.usage,
		);
	}
	const self = holder.pid === process.pid;
	return new UserError(
		`Session ${ref} is in use by ${agent}${self ? "this" : "another"} prime-agent process (process ${holder.pid}, ${since}): ${clash}`,
		self
			? `Close that session before opening it again; ${fork}.`
			: `Wait for that run to end, or stop it (\`kill ${holder.pid}\`), then resume again; ${fork}.`,
		ExitCode.usage,
	);
}
