/**
 * What the supervisor answers, one handler per request kind (see `SupervisorRequests`). A handler
 * returns its reply's data or throws a `UserError` (its message, hint and exit code reach the
 * client). Requests about one session file run in turn, so a session never gets two workers.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
import type { AgentInfo } from "./protocol.js";
import type { SupervisorRequests, WorkerTarget } from "./requests.js";
import type { Handlers } from "./serve.js";
import { sessionFileOf } from "./session-files.js";
import { type DaemonPaths, newWorkerKey, type WorkerRecord, workerDir, workerSocket } from "./state.js";
import type { StartFailure, WorkerProcesses } from "./worker-processes.js";
import type { WorkerRecords } from "./worker-records.js";

/** What the handlers work on: the supervisor's records and processes, and its own answers. */
export interface SupervisorState {
	paths: DaemonPaths;
	records: WorkerRecords;
	workers: WorkerProcesses;
	/** A key, a key prefix, or a session id (prefix) → the key. */
	resolve(ref: string): string;
	list(): AgentInfo[];
	info(key: string): AgentInfo;
	/** Stop every worker, then the supervisor process. */
	shutdown(force: boolean): void;
}

/** A start that failed, as the request's error. */
function failed(failure: StartFailure): UserError {
	return new UserError(failure.message, failure.hint, (failure.exitCode ?? ExitCode.usage) as ExitCodeValue);
}

export function supervisorHandlers(state: SupervisorState): Handlers<SupervisorRequests, void> {
	const { paths, records, workers } = state;
	const target = (key: string, attached?: true): WorkerTarget => ({
		key,
		socket: workerSocket(paths, key),
		...(attached ? { attached } : {}),
	});
	return {
		start: ({ options, owner, env }) => {
			const path = sessionFileOf(options, join(paths.dir, ".."));
			return workers.turns.run(path, async () => {
				// The session asked for has a worker already (live, stopping, or restarting after a
				// crash): two writers must never share a session file, so that worker serves it.
				const holder = path ? await workers.holderOf(path) : undefined;
				if (holder) {
					if (options.at)
						throw new UserError(
							`Session ${holder.sessionId} is open in agent ${holder.key}; it cannot be resumed at another entry while it runs.`,
							`Attach to it with \`prime-agent attach ${holder.key}\`, or continue from that entry in a new file with --fork ${holder.sessionId} --at <entry>.`,
						);
					const failure = workers.live(holder.key) ? undefined : await workers.startAgain(holder.key, { env });
					if (failure) throw failed(failure);
					return target(holder.key, true);
				}
				const key = newWorkerKey();
				const record: WorkerRecord = { key, owner, options, env, crashes: 0, createdAt: new Date().toISOString() };
				try {
					records.save(record);
				} catch (error) {
					// A disk that refuses the record (full): nothing of this agent is left behind.
					rmSync(workerDir(paths, key), { recursive: true, force: true });
					throw error;
				}
				const failure = await workers.spawn(key);
				if (failure) {
					rmSync(workerDir(paths, key), { recursive: true, force: true });
					// Its log went with its folder: what it wrote ends the message.
					throw failed(
						failure.log ? { ...failure, hint: "Try again; `prime-agent doctor` checks the setup." } : failure,
					);
				}
				return target(key);
			});
		},
		resume: (request) => startAgain(state, request.key, false, request, target),
		restart: (request) => startAgain(state, request.key, true, request, target),
		list: () => state.list(),
		status: () => ({ pid: process.pid, socket: paths.socket, agents: state.list(), spare: workers.spare }),
		stop: async ({ key: ref, force }) => {
			const key = state.resolve(ref);
			// Marked at once (a restart under way sees it), then stopped in turn with the session's other requests.
			workers.markStop(key);
			await workers.turns.run(workers.sessionPathOf(key), () => workers.stop(key, force === true));
			return state.info(key);
		},
		stop_all: ({ force }) => {
			setImmediate(() => state.shutdown(force === true));
			return undefined;
		},
	};
}

/**
 * `resume` (attach): a saved agent is started again, a live one just named. `restart` (`/model`):
 * a live one is stopped (it says so to its views, which follow it) and started again with `changes`.
 */
function startAgain(
	state: SupervisorState,
	ref: string,
	restart: boolean,
	how: { env?: Record<string, string>; changes?: { model?: string; at?: string } },
	target: (key: string, attached?: true) => WorkerTarget,
): Promise<WorkerTarget> {
	const { records, workers } = state;
	const key = state.resolve(ref);
	const path = workers.sessionPathOf(key);
	return workers.turns.run(path, async () => {
		// A stop asked for (`prime-agent shutdown`) is not undone by a restart (`/model`); an attach may.
		const refuse = () => {
			if (restart && records.read(key)?.stopRequestedAt !== undefined)
				throw new UserError(
					`Agent ${key} was stopped (prime-agent shutdown), so it is not started again on another model.`,
					`\`prime-agent attach ${key}\` starts it again.`,
				);
		};
		refuse();
		const { env } = how;
		if (restart && workers.live(key) && !workers.stopping(key)) await workers.stopFor(key, "SIGUSR2");
		refuse();
		if (workers.live(key) && !workers.stopping(key)) return target(key);
		// On its way out (stopping): started again once gone.
		if (workers.live(key)) await workers.stopFor(key);
		// Its session is served by another worker now (`--resume` started one): that one serves it.
		const holder = path ? await workers.holderOf(path, key) : undefined;
		if (holder) {
			if (!workers.live(holder.key)) await workers.startAgain(holder.key, { env });
			return target(holder.key, true);
		}
		const failure = await workers.startAgain(key, { env, changes: how.changes ?? {}, resetCrashes: true });
		if (failure) throw failed(failure);
		return target(key);
	});
}
