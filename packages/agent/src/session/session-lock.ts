import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { ensurePrivateDir } from "../home/index.js";
import { type ProcessLockHolder, removeDeadLock, takeProcessLock } from "../process-lock/index.js";

/** Beside `<id>.jsonl`: `<id>.lock`, while a process runs the session. */
const LOCK_SUFFIX = ".lock";

/** Who runs a session, as the lock records it for a second run to name. */
export interface SessionHolder {
	/** The session's id. */
	session: string;
	/** The agent running it: `root`, or a sub-agent's name. */
	agent: string;
	/** The background daemon's agent key, when one of its workers runs it. */
	daemonAgent?: string;
	/** When it took the session (ISO time). */
	since: string;
}

/** A session this process runs; `release` when its run ends (a process that dies releases it too). */
export interface SessionLock {
	release(): void;
}

/** The lock file of the session file at `sessionFile`. */
export function sessionLockPath(sessionFile: string): string {
	return `${sessionFile.replace(/\.jsonl$/, "")}${LOCK_SUFFIX}`;
}

/**
 * Take the session at `sessionFile` for this process, before its file is read: two runs of one
 * session would both write its file and its kernel-state folder, each appending under its own idea
 * of the branch. A session another live process runs (or this one, through another agent) is a
 * `UserError` naming that agent and process and saying what to do; a holder that died no longer
 * holds it. `ref` names the session in the advice (`prime-agent -r <ref>`).
 */
export function lockSession(
	sessionFile: string,
	holder: Omit<SessionHolder, "since">,
	ref: string = holder.session,
): SessionLock {
	const path = sessionLockPath(sessionFile);
	ensurePrivateDir(dirname(path));
	const lock = takeProcessLock<SessionHolder>(
		path,
		{ ...holder, since: new Date().toISOString() },
		`resume it with \`prime-agent -r ${ref}\``,
	);
	if (lock.taken) return lock;
	throw sessionInUse(ref, path, lock.holder);
}

function sessionInUse(ref: string, path: string, holder: (SessionHolder & ProcessLockHolder) | undefined): UserError {
	const fork = `or go on from a copy of it beside that run: \`prime-agent --fork ${ref}\``;
	if (!holder) {
		return new UserError(
			`Session ${ref} is in use: other prime-agent processes kept taking its lock (${path}).`,
			`Wait for them to end, then resume it again; ${fork}.`,
			ExitCode.usage,
		);
	}
	const since = `since ${holder.since.replace("T", " ").slice(0, 19)} UTC`;
	const agent = holder.agent === "root" ? "" : `sub-agent "${holder.agent}" of `;
	if (holder.daemonAgent) {
		return new UserError(
			`Session ${ref} is in use by ${agent}background agent ${holder.daemonAgent} (process ${holder.pid}, ${since}): two runs of one session would write into each other's conversation and kernel state.`,
			`Join that run with \`prime-agent attach ${holder.daemonAgent}\`, or stop it with \`prime-agent shutdown ${holder.daemonAgent}\` and resume again; ${fork}.`,
			ExitCode.usage,
		);
	}
	const who = holder.pid === process.pid ? "this prime-agent process" : "another prime-agent process";
	return new UserError(
		`Session ${ref} is in use by ${agent}${who} (process ${holder.pid}, ${since}): two runs of one session would write into each other's conversation and kernel state.`,
		holder.pid === process.pid
			? `Close that session before opening it again; ${fork}.`
			: `Wait for that run to end, or stop it (\`kill ${holder.pid}\`), then resume again; ${fork}.`,
		ExitCode.usage,
	);
}

/**
 * Remove the locks in `dir` (a sessions folder) whose holder is gone: a run killed before its
 * session's first answer leaves a lock and no session file. A live holder's lock stays.
 */
export function removeDeadSessionLocks(dir: string): void {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return;
	}
	for (const name of names) {
		if (!name.endsWith(LOCK_SUFFIX)) continue;
		removeDeadLock(join(dir, name));
	}
}
