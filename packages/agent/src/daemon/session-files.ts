/**
 * Which session file a request is about, and requests about one file in turn: the supervisor's
 * means of keeping one writer per session.
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { agentPaths } from "../home/index.js";
import { latestSession, resolveSessionRef } from "../session/index.js";
import type { WorkerSessionOptions } from "./protocol.js";

/** A file's real path (symlinks resolved: a symlinked home is the same session), or the path as given. */
export function realPath(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

/**
 * The real path of the session file `options` resumes or continues in the agent home `home`
 * (none for a new session, a fork, or a reference the worker will report as unknown).
 */
export function sessionFileOf(options: WorkerSessionOptions, home: string): string | undefined {
	if (options.fork || !(options.resume || options.continueLatest)) return undefined;
	const sessions = agentPaths(home).sessions;
	try {
		const path = options.resume
			? resolveSessionRef(options.resume, sessions, options.cwd)
			: latestSession(sessions, options.cwd)?.path;
		return path && realPath(path);
	} catch {
		// A whole id names its file even before the file exists: a session's file is written at its
		// first answer, and a worker may hold the session (its lock) while that answer is on its way.
		return options.resume && SESSION_ID.test(options.resume)
			? realPath(join(sessions, `${options.resume}.jsonl`))
			: undefined;
	}
}

/** A session's whole id (a UUID), which is its file's name in the agent home. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Work keyed by a session file runs one piece after another, in the order it came; no key, at once. */
export class InTurn {
	private readonly queues = new Map<string, Promise<void>>();

	run<T>(key: string | undefined, work: () => Promise<T>): Promise<T> {
		if (!key) return work();
		const next = (this.queues.get(key) ?? Promise.resolve()).then(work, work);
		const settled = next.then(
			() => {},
			() => {},
		);
		this.queues.set(key, settled);
		void settled.then(() => {
			if (this.queues.get(key) === settled) this.queues.delete(key);
		});
		return next;
	}
}
