/**
 * The per-user supervisor: started on demand by the first client, it starts one worker process per
 * session tree, restarts a crashed one (after 250 ms, 1 s, 5 s; a fourth crash marks the tree
 * failed with the reason), stops them on request (the intent is written before the kill), and on
 * its own start re-adopts the workers still alive from their records. It never runs a model or a
 * kernel itself. With nothing to supervise for a few minutes it exits (the next client starts one
 * again). A record the disk refuses (full, read-only) is kept in memory and written again
 * later (see `WorkerRecords`); meanwhile its agent reads as failed with the disk's reason, and is not
 * restarted.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { UserError } from "../errors.js";
import { probeWrite, removeLeftoverTempFiles } from "../home/index.js";
import {
	type AgentInfo,
	DAEMON_PROTOCOL_VERSION,
	LineConnection,
	type Reply,
	replyError,
	replyOk,
	type WorkerOwner,
	type WorkerSessionOptions,
} from "./protocol.js";
import { InTurn, realPath, sessionFileOf } from "./session-files.js";
import { SPARE_ENV, SpareWorkers } from "./spare-worker.js";
import {
	type DaemonPaths,
	isSameProcess,
	newWorkerKey,
	processStartId,
	readJson,
	readSessionRecord,
	WORKER_START_FAILED,
	type WorkerRecord,
	workerDir,
	workerKeys,
	workerSocket,
} from "./state.js";
import { takeSupervisorLock } from "./supervisor-lock.js";
import { WorkerRecords } from "./worker-records.js";

/** Waits before restarting a crashed worker: the first, second and third crash. */
export const RESTART_DELAYS_MS = [250, 1000, 5000] as const;
/** Finished one-shot (`-p`, JSON) records kept for `attach` and `agents`; older ones are removed when a supervisor starts. */
export const KEPT_FINISHED_ONE_SHOTS = 50;
/** How long a supervisor with nothing to supervise stays before it exits (see `armIdleExit`). */
export const SUPERVISOR_IDLE_EXIT_MS = 5 * 60_000;
/** A crash this long after the previous one starts the count again. */
const CRASH_WINDOW_MS = 10 * 60_000;
/** How long a worker may take to start its session (node, the session, its extensions: seconds). */
const WORKER_START_MS = 60_000;

const WORKER_MAIN = fileURLToPath(new URL("./worker-main.js", import.meta.url));

interface Tracked {
	child?: ChildProcess;
	poll?: NodeJS.Timeout;
	restart?: NodeJS.Timeout;
	exited?: Promise<void>;
	onExit?: () => void;
}

export class Supervisor {
	private server: Server | undefined;
	private readonly tracked = new Map<string, Tracked>();
	private idleTimer: NodeJS.Timeout | undefined;
	/** Worker records; one the disk refuses is kept here and written again later. */
	private readonly records: WorkerRecords;

	/** A worker process loaded ahead of the next start (see `SpareWorkers`). */
	private readonly spares: SpareWorkers;

	constructor(
		private readonly paths: DaemonPaths,
		private readonly token: string,
		private readonly idleExitMs: number,
	) {
		this.records = new WorkerRecords(paths, (line) => process.stderr.write(`${line}\n`));
		this.spares = new SpareWorkers(paths.dir, WORKER_MAIN, process.env[SPARE_ENV] !== "0");
	}

	/**
	 * Take the supervisor lock (false when another live supervisor holds it), listen, and adopt or
	 * recover the workers of the records on disk.
	 */
	async start(): Promise<boolean> {
		if (!takeSupervisorLock(this.paths.supervisor)) return false;
		// Temp files of record writes cut short by a kill (their process is gone).
		removeLeftoverTempFiles(this.paths.dir, 2);
		if (existsSync(this.paths.socket)) rmSync(this.paths.socket);
		this.server = createServer((socket) => {
			const connection = new LineConnection(socket);
			this.connections++;
			void connection.closed.then(() => {
				this.connections--;
				this.idleSince = Date.now();
			});
			this.accept(connection);
		});
		await new Promise<void>((resolve, reject) => {
			this.server?.once("error", reject);
			this.server?.listen(this.paths.socket, () => resolve());
		});
		for (const key of workerKeys(this.paths)) this.recover(key);
		this.pruneFinishedOneShots();
		this.armIdleExit();
		this.watchHome();
		return true;
	}

	/** The agent home was removed (or another supervisor took over the socket): nothing is left to serve. */
	private watchHome(): void {
		const timer = setInterval(() => {
			const holder = readJson<{ pid: number }>(this.paths.supervisor);
			if (existsSync(this.paths.socket) && holder?.pid === process.pid) return;
			clearInterval(timer);
			this.close();
			process.exit(0);
		}, 2000);
		timer.unref();
	}

	/** Stop every worker, then the supervisor. */
	async shutdown(force: boolean): Promise<void> {
		// Every stop intent first, so that no restart under way starts a worker again.
		for (const key of workerKeys(this.paths)) this.markStop(key);
		await Promise.all(workerKeys(this.paths).map((key) => this.stopWorker(key, force)));
		this.close();
	}

	close(): void {
		this.spares.close();
		clearTimeout(this.idleTimer);
		this.records.close();
		this.server?.close();
		for (const tracked of this.tracked.values()) {
			clearInterval(tracked.poll);
			clearTimeout(tracked.restart);
		}
		rmSync(this.paths.socket, { force: true });
		const holder = readJson<{ pid: number }>(this.paths.supervisor);
		if (holder?.pid === process.pid) rmSync(this.paths.supervisor, { force: true });
	}

	private accept(connection: LineConnection): void {
		let authed = false;
		connection.onMessage(async (message) => {
			const id = typeof message.id === "number" ? message.id : 0;
			if (!authed) {
				if (message.type !== "hello" || message.token !== this.token) {
					connection.send(
						replyError(
							id,
							"Wrong or missing token: this daemon belongs to another user.",
							"Use your own agent home (PRIME_AGENT_DIR).",
						),
					);
					connection.close();
					return;
				}
				if (message.version !== DAEMON_PROTOCOL_VERSION) {
					connection.send(
						replyError(
							id,
							`The daemon speaks protocol ${DAEMON_PROTOCOL_VERSION}, the client ${String(message.version)}.`,
							"Run `prime-agent shutdown` to stop the old daemon, then try again.",
						),
					);
					connection.close();
					return;
				}
				authed = true;
				connection.send(replyOk(id, { pid: process.pid }));
				return;
			}
			try {
				connection.send(await this.handle(id, message));
			} catch (error) {
				const user = error instanceof UserError ? error : undefined;
				connection.send({
					...replyError(id, (error as Error).message, user?.hint ?? "See `prime-agent status`."),
					...(user ? { exitCode: user.exitCode } : {}),
				});
			}
		});
	}

	private async handle(id: number, message: Record<string, unknown>): Promise<Reply> {
		switch (message.type) {
			case "start": {
				const options = message.options as WorkerSessionOptions;
				const env = (message.env ?? {}) as Record<string, string>;
				const path = sessionFileOf(options, join(this.paths.dir, ".."));
				return this.turns.run(path, async () => {
					// The session asked for has a worker already (live, stopping, or restarting after a
					// crash): two writers must never share a session file, so that worker serves it.
					const holder = path ? await this.holderOf(path) : undefined;
					if (holder) {
						if (options.at)
							return replyError(
								id,
								`Session ${holder.sessionId} is open in agent ${holder.key}; it cannot be resumed at another entry while it runs.`,
								`Attach to it with \`prime-agent attach ${holder.key}\`, or continue from that entry in a new file with --fork ${holder.sessionId} --at <entry>.`,
							);
						const failure = this.liveWorker(holder.key) ? undefined : await this.startAgain(holder.key, { env });
						if (failure) return { type: "reply", id, ok: false, ...failure };
						return replyOk(id, { key: holder.key, socket: workerSocket(this.paths, holder.key), attached: true });
					}
					const key = newWorkerKey();
					const record: WorkerRecord = {
						key,
						owner: message.owner as WorkerOwner,
						options,
						env,
						crashes: 0,
						createdAt: new Date().toISOString(),
					};
					try {
						this.records.save(record);
					} catch (error) {
						// A disk that refuses the record (full): nothing of this agent is left behind.
						rmSync(workerDir(this.paths, key), { recursive: true, force: true });
						throw error;
					}
					const failure = await this.spawnWorker(key);
					if (failure) {
						rmSync(workerDir(this.paths, key), { recursive: true, force: true });
						return { type: "reply", id, ok: false, ...failure };
					}
					return replyOk(id, { key, socket: workerSocket(this.paths, key) });
				});
			}
			case "resume":
			case "restart": {
				const key = this.resolve(String(message.key));
				const restart = message.type === "restart";
				const path = this.sessionPathOfKey(key);
				return this.turns.run(path, async () => {
					// A stop asked for (`prime-agent shutdown`) is not undone by a restart (`/model`); an attach may.
					const stopped = () => restart && this.records.read(key)?.stopRequestedAt !== undefined;
					const refuse = () =>
						replyError(
							id,
							`Agent ${key} was stopped (prime-agent shutdown), so it is not started again on another model.`,
							`\`prime-agent attach ${key}\` starts it again.`,
						);
					if (stopped()) return refuse();
					const changes = (message.changes ?? {}) as { model?: string; at?: string };
					const env = message.env as Record<string, string> | undefined;
					// `restart` (`/model`): stopped (it says so to its views, which follow it) and started again.
					if (restart && this.liveWorker(key) && !this.stopping(key)) await this.stopFor(key, "SIGUSR2");
					if (stopped()) return refuse();
					if (this.liveWorker(key) && !this.stopping(key))
						return replyOk(id, { key, socket: workerSocket(this.paths, key) });
					// On its way out (stopping): started again once gone.
					if (this.liveWorker(key)) await this.stopFor(key);
					// Its session is served by another worker now (`--resume` started one): that one serves it.
					const holder = path ? await this.holderOf(path, key) : undefined;
					if (holder) {
						if (!this.liveWorker(holder.key)) await this.startAgain(holder.key, { env });
						return replyOk(id, { key: holder.key, socket: workerSocket(this.paths, holder.key), attached: true });
					}
					const failure = await this.startAgain(key, { env, changes, resetCrashes: true });
					if (failure) return { type: "reply", id, ok: false, ...failure };
					return replyOk(id, { key, socket: workerSocket(this.paths, key) });
				});
			}
			case "list":
				return replyOk(id, this.list());
			case "status":
				return replyOk(id, { pid: process.pid, socket: this.paths.socket, agents: this.list() });
			case "stop": {
				const key = this.resolve(String(message.key));
				// Marked at once (a restart under way sees it), then stopped in turn with the session's other requests.
				this.markStop(key);
				await this.turns.run(this.sessionPathOfKey(key), () => this.stopWorker(key, message.force === true));
				return replyOk(id, this.info(key));
			}
			case "stop_all":
				setImmediate(() => void this.shutdown(message.force === true).then(() => process.exit(0)));
				return replyOk(id);
			default:
				return replyError(
					id,
					`Unknown request ${String(message.type)}.`,
					"Update the client and the daemon to the same version.",
				);
		}
	}

	/** A key, a key prefix, or a session id (prefix) → the key. */
	/** Start, resume, restart and stop requests per session file, in the order they came. */
	private readonly turns = new InTurn();

	private resolve(ref: string): string {
		const keys = workerKeys(this.paths);
		if (keys.includes(ref)) return ref;
		const matches = keys.filter(
			(key) => key.startsWith(ref) || readSessionRecord(this.paths, key)?.session?.id.startsWith(ref),
		);
		if (matches.length === 1) return matches[0] as string;
		// Several agents held one session over time: the live one, else the newest resident one (the one
		// a user worked in; a `-p` run's agent only if there is no other), is the session's.
		const sessions = new Set(matches.map((key) => readSessionRecord(this.paths, key)?.session?.id));
		if (matches.length > 1 && sessions.size === 1 && !sessions.has(undefined)) {
			const resident = matches.filter((key) => this.records.read(key)?.owner === "resident");
			return matches.find((key) => this.liveWorker(key)) ?? resident.at(-1) ?? (matches.at(-1) as string);
		}
		throw new Error(
			matches.length === 0
				? `No agent ${ref}; \`prime-agent agents\` lists them.`
				: `"${ref}" names ${matches.length} agents; give more of the id.`,
		);
	}

	/**
	 * The agent (other than `except`) that serves session `path`: a live worker, or one whose restart
	 * after a crash is due. One on its way out is waited for first (it is saving the session).
	 */
	private async holderOf(path: string, except?: string): Promise<{ key: string; sessionId: string } | undefined> {
		for (const key of workerKeys(this.paths)) {
			if (key === except) continue;
			const session = readSessionRecord(this.paths, key)?.session;
			// One file however it is named (a symlinked home, /tmp and /private/tmp).
			if (!session || realPath(session.path) !== path) continue;
			if (this.liveWorker(key) && this.stopping(key)) await this.stopFor(key);
			if (this.liveWorker(key) || this.due(key)) return { key, sessionId: session.id };
		}
		return undefined;
	}

	/** Whether the live worker of `key` has stopped its session and is on its way out. */
	private stopping(key: string): boolean {
		const pid = this.records.read(key)?.pid;
		const session = readSessionRecord(this.paths, key);
		return session?.stoppedAt !== undefined && session.pid === pid;
	}

	/** The real path of the session file agent `key` serves (none before its session has started). */
	private sessionPathOfKey(key: string): string | undefined {
		const path = readSessionRecord(this.paths, key)?.session?.path;
		return path && realPath(path);
	}

	/** Write the intent to stop `key` (before anything else, so no restart or supervisor starts it again). */
	private markStop(key: string): void {
		const record = this.records.read(key);
		if (!record) return;
		const tracked = this.tracked.get(key);
		clearTimeout(tracked?.restart);
		if (tracked) tracked.restart = undefined;
		record.stopRequestedAt = new Date().toISOString();
		try {
			this.records.keep(record);
		} catch (error) {
			// The intent on disk is for a supervisor started later; this one stops the worker regardless
			// (a failed write here, on a full disk, left every agent running).
			process.stderr.write(`Could not record the stop of agent ${key}: ${(error as Error).message}\n`);
		}
	}

	/**
	 * Wait until the worker of `key` has exited (after `signal`, when given: SIGUSR2 stops it to be
	 * started again, its views following it); SIGKILL after 20 s, as a stop does.
	 */
	private async stopFor(key: string, signal?: NodeJS.Signals): Promise<void> {
		const record = this.records.read(key);
		if (!record?.pid || !isSameProcess(record.pid, record.startId)) return;
		// This worker's exit, taken now: a worker started later under the key is not waited for.
		const exited = this.tracked.get(key)?.exited;
		const pid = record.pid;
		if (signal) process.kill(pid, signal);
		const deadline = Date.now() + 20_000;
		while (isSameProcess(pid, record.startId)) {
			if (Date.now() > deadline) {
				process.kill(pid, "SIGKILL");
				break;
			}
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		await exited;
	}

	/**
	 * Start the saved (or restart-pending) agent `key` again on its session: a pending restart is
	 * replaced by this start; `changes`: another model, an entry (`/model`).
	 */
	private startAgain(
		key: string,
		how: {
			env?: Record<string, string>;
			changes?: { model?: string; at?: string };
			resetCrashes?: boolean;
		},
	): Promise<{ message: string; hint: string; exitCode?: number } | undefined> {
		const tracked = this.tracked.get(key);
		clearTimeout(tracked?.restart);
		if (tracked) tracked.restart = undefined;
		const record = this.records.read(key) as WorkerRecord;
		const session = readSessionRecord(this.paths, key)?.session;
		record.stopRequestedAt = undefined;
		record.failedReason = undefined;
		if (how.resetCrashes) record.crashes = 0;
		if (session && existsSync(session.path)) record.options = resumeOptions(record.options, session.path);
		const before = record.options;
		record.options = {
			...record.options,
			...(how.changes?.model ? { model: how.changes.model } : {}),
			...(how.changes?.at && record.options.resume ? { at: how.changes.at } : {}),
		};
		if (how.env) record.env = how.env;
		// Refused by the disk: the request fails with why (the agent stays as it was).
		this.records.save(record);
		return this.spawnWorker(key).then((failure) => {
			// A model that would not start is not kept: `attach` starts the agent as it was.
			if (failure && how.changes) {
				const failed = this.records.read(key);
				if (failed) this.records.keep({ ...failed, options: before });
			}
			return failure;
		});
	}

	private list(): AgentInfo[] {
		return workerKeys(this.paths).map((key) => this.info(key));
	}

	private info(key: string): AgentInfo {
		const record = this.records.read(key) as WorkerRecord;
		const session = readSessionRecord(this.paths, key);
		const live = this.liveWorker(key);
		const failedReason = record.failedReason ?? this.records.refusal(key);
		const state: AgentInfo["state"] = failedReason
			? "failed"
			: live
				? session?.session && session.pid === record.pid
					? session.busy
						? "running"
						: "idle"
					: "starting"
				: this.due(key)
					? "starting"
					: "saved";
		return {
			key,
			state,
			...(live ? { pid: record.pid } : {}),
			owner: record.owner,
			cwd: session?.session?.cwd ?? record.options.cwd,
			sessionId: session?.session?.id,
			sessionPath: session?.session?.path,
			lastActivity: session?.lastActivity,
			clients: live ? (session?.clients ?? 0) : 0,
			crashes: record.crashes,
			...(failedReason ? { failedReason } : {}),
			...(state === "saved" && session?.stopReason ? { stopReason: session.stopReason } : {}),
			...(session?.heartbeat ? { heartbeat: session.heartbeat } : {}),
			schedules: session?.schedules ?? 0,
		};
	}

	/** A worker of `key` is on its way: a restart after a crash is pending, or a spare is being given to it. */
	private due(key: string): boolean {
		return this.tracked.get(key)?.restart !== undefined || this.adopting.has(key);
	}

	/** Agents a spare is being given to (it may still be loading): they read as starting meanwhile. */
	private readonly adopting = new Set<string>();

	private liveWorker(key: string): boolean {
		const record = this.records.read(key);
		return isSameProcess(record?.pid, record?.startId);
	}

	/** On start: adopt a live worker, restart one that died without being asked to, leave the rest saved. */
	private recover(key: string): void {
		const record = this.records.read(key);
		if (!record || record.failedReason) return;
		if (isSameProcess(record.pid, record.startId)) {
			this.watch(key, record.pid as number);
			return;
		}
		const session = readSessionRecord(this.paths, key);
		// Stopped on purpose (the intent, or the worker's own record of it): not resurrected.
		if (record.stopRequestedAt || (session?.stoppedAt && session.pid === record.pid)) {
			forgetEnvironment(record);
			this.records.keep(record);
			return;
		}
		if (record.pid) this.crashed(key, "the worker was gone when the supervisor started");
	}

	/**
	 * Every `-p` run leaves a record (so `attach` can replay it): only the newest
	 * `KEPT_FINISHED_ONE_SHOTS` finished one-shot records are kept. Their sessions stay in
	 * `sessions/` for `--resume`; resident, running, restarting and failed agents are never pruned.
	 */
	private pruneFinishedOneShots(): void {
		const finished = workerKeys(this.paths).filter((key) => {
			const record = this.records.read(key);
			return record?.owner === "oneshot" && !record.failedReason && !this.liveWorker(key) && !this.due(key);
		});
		// workerKeys lists oldest first.
		for (const key of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED_ONE_SHOTS)))
			rmSync(workerDir(this.paths, key), { recursive: true, force: true });
	}

	/**
	 * Start the worker of `key` (the spare, when there is one); resolves once it serves its socket,
	 * or with why it could not start.
	 */
	private async spawnWorker(key: string): Promise<{ message: string; hint: string; exitCode?: number } | undefined> {
		const dir = workerDir(this.paths, key);
		const asked = this.records.read(key) as WorkerRecord;
		const cwd = existsSync(asked.options.cwd) ? asked.options.cwd : dir;
		const env = { ...asked.env, PRIME_AGENT_DIR: join(this.paths.dir, "..") };
		const log = join(dir, "worker.log");
		this.adopting.add(key);
		const spare = await this.spares.adopt(key, log, cwd, env).finally(() => this.adopting.delete(key));
		const child = spare ?? startWorkerProcess(key, log, cwd, env);
		// Read again: a request handled while the spare got ready may have changed it.
		const record = this.records.read(key) as WorkerRecord;
		const pid = child.pid as number;
		record.pid = pid;
		record.startId = processStartId(pid);
		this.records.keep(record);
		const tracked: Tracked = { child };
		this.tracked.set(key, tracked);
		let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
		tracked.exited = new Promise((resolve) => {
			child.on("exit", (code, signal) => {
				exitInfo = { code, signal };
				resolve();
				this.exited(key, pid, code, signal);
			});
		});
		// A stop asked for while the spare got ready: the stop had no process to signal yet.
		if (record.stopRequestedAt) child.kill("SIGTERM");
		const deadline = Date.now() + WORKER_START_MS;
		return new Promise((resolve) => {
			const poll = setInterval(() => {
				const session = readSessionRecord(this.paths, key);
				// A worker that never becomes ready (stopped, hung) does not hold its session's requests.
				if (!exitInfo && Date.now() > deadline) {
					clearInterval(poll);
					try {
						process.kill(pid, "SIGKILL");
					} catch {}
					resolve({
						message: `The worker did not start its session within ${WORKER_START_MS / 1000} s; it was stopped.`,
						hint: `See ${join(dir, "worker.log")}, then try again.`,
					});
					return;
				}
				if (exitInfo) {
					clearInterval(poll);
					const reason = session?.pid === pid ? session.stopReason : undefined;
					// A worker that could not even say why (its record refused): a disk that refuses writes is why.
					const refusal = reason ? undefined : probeWrite(join(dir, "session.json"));
					if (refusal) {
						resolve({ message: refusal.message, hint: refusal.hint, exitCode: refusal.exitCode });
						return;
					}
					resolve({
						message:
							reason ??
							`The worker exited (${describeExit(exitInfo.code, exitInfo.signal)}) before its session started.`,
						hint: session?.stopHint ?? `See ${join(dir, "worker.log")}.`,
						exitCode: session?.exitCode,
					});
				} else if (session?.pid === pid && session.session && !session.stoppedAt) {
					clearInterval(poll);
					resolve(undefined);
					// Sessions are started here: the next one (or this one's `/model`) finds a worker loaded.
					this.spares.prepare();
				}
			}, 25);
		});
	}

	/** A worker this supervisor did not start: watched by polling its pid and start identity. */
	private watch(key: string, pid: number): void {
		const record = this.records.read(key) as WorkerRecord;
		const tracked: Tracked = {};
		this.tracked.set(key, tracked);
		tracked.exited = new Promise((resolve) => {
			tracked.poll = setInterval(() => {
				if (isSameProcess(pid, record.startId)) return;
				clearInterval(tracked.poll);
				resolve();
				this.exited(key, pid, null, null);
			}, 200);
		});
	}

	private exited(key: string, pid: number, code: number | null, signal: NodeJS.Signals | null): void {
		const record = this.records.read(key);
		if (!record || record.pid !== pid) return;
		const session = readSessionRecord(this.paths, key);
		const onPurpose =
			record.stopRequestedAt ||
			code === 0 ||
			(code === null && signal === null && session?.stoppedAt && session.pid === pid);
		if (onPurpose) {
			forgetEnvironment(record);
			this.records.keep(record);
			return;
		}
		if (code === WORKER_START_FAILED) {
			const reason = session?.stopReason ?? probeWrite(join(workerDir(this.paths, key), "session.json"))?.message;
			record.failedReason = `the session could not start again: ${reason ?? "see worker.log"}`;
			forgetEnvironment(record);
			this.records.keep(record);
			return;
		}
		this.crashed(
			key,
			code === null && signal === null ? "the worker died" : `the worker ${describeExit(code, signal)}`,
		);
	}

	/** Count a crash; restart after the next delay, or mark the tree failed after the last. */
	private crashed(key: string, reason: string): void {
		const record = this.records.read(key) as WorkerRecord;
		const now = Date.now();
		if (record.lastCrashAt && now - Date.parse(record.lastCrashAt) > CRASH_WINDOW_MS) record.crashes = 0;
		record.crashes++;
		record.lastCrashAt = new Date(now).toISOString();
		const delay = RESTART_DELAYS_MS[record.crashes - 1];
		if (delay === undefined) {
			record.failedReason = `${reason} (crash ${record.crashes}; restarted after ${RESTART_DELAYS_MS.map((ms) => (ms < 1000 ? `${ms} ms` : `${ms / 1000} s`)).join(", ")})`;
			forgetEnvironment(record);
			this.records.keep(record);
			process.stderr.write(`Agent ${key} failed: ${record.failedReason}\n`);
			return;
		}
		const session = readSessionRecord(this.paths, key)?.session;
		if (session && existsSync(session.path)) record.options = resumeOptions(record.options, session.path);
		// Not restarted while the disk refuses its record: a restart could neither record itself nor save the session.
		if (!this.records.keep(record)) return;
		process.stderr.write(`Agent ${key}: ${reason}; restarting in ${delay} ms (crash ${record.crashes})\n`);
		const tracked = this.tracked.get(key) ?? {};
		this.tracked.set(key, tracked);
		tracked.restart = setTimeout(() => {
			const path = this.sessionPathOfKey(key);
			void this.turns
				.run(path, async () => {
					// Started meanwhile (`attach`, a `--resume` sent here): nothing is due any more.
					if (!tracked.restart) return;
					tracked.restart = undefined;
					const latest = this.records.read(key);
					// A stop asked for meanwhile wins, and so does another worker that took the session.
					if (!latest || latest.stopRequestedAt || latest.failedReason) return;
					if (path && (await this.holderOf(path, key))) return;
					await this.spawnWorker(key);
				})
				.catch((error) => process.stderr.write(`Agent ${key} could not be restarted: ${(error as Error).message}\n`));
		}, delay);
	}

	/** Write the intent to stop, then stop the worker (SIGTERM: it saves; `force`: SIGKILL). */
	private async stopWorker(key: string, force: boolean): Promise<void> {
		this.markStop(key);
		await this.stopFor(key, force ? "SIGKILL" : "SIGTERM");
	}

	/**
	 * With nothing to supervise for `idleExitMs` (no live worker, no restart due; heartbeats and
	 * schedules live in workers), the supervisor exits and the next client starts one again. Records
	 * still to be written keep it (they would be lost), and so does an open connection: a client
	 * between its `hello` and its request never finds the supervisor gone. A client whose connection
	 * is only queued when it exits sees it close unanswered, and starts a new one.
	 */
	private armIdleExit(): void {
		const check = () => {
			// Records still to be written keep it too: they would be lost; so does a client connected now.
			const live =
				this.connections > 0 ||
				this.records.pending > 0 ||
				workerKeys(this.paths).some((key) => this.liveWorker(key) || this.due(key));
			if (live) this.idleSince = Date.now();
			else if (Date.now() - this.idleSince >= this.idleExitMs) {
				this.close();
				process.exit(0);
			}
			this.idleTimer = setTimeout(check, Math.min(this.idleExitMs, 30_000));
		};
		this.idleTimer = setTimeout(check, Math.min(this.idleExitMs, 30_000));
	}

	private idleSince = Date.now();
	/** Client connections open now (see `armIdleExit`). */
	private connections = 0;
}

/** A worker process for agent `key`, from nothing (no spare), writing to `log`. */
function startWorkerProcess(key: string, log: string, cwd: string, env: Record<string, string>): ChildProcess {
	const fd = openSync(log, "a", 0o600);
	const child = spawn(process.execPath, [WORKER_MAIN, key], { cwd, env, detached: true, stdio: ["ignore", fd, fd] });
	closeSync(fd);
	child.unref();
	return child;
}

/** Start again from the session file: the options that picked or made the session no longer apply. */
function resumeOptions(options: WorkerSessionOptions, sessionPath: string): WorkerSessionOptions {
	const { continueLatest: _c, fork: _f, at: _a, goal: _g, resume: _r, ...rest } = options;
	return { ...rest, resume: sessionPath };
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
	return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

/**
 * A worker that will not be started again by this record keeps no copy of its client's
 * environment (provider keys among it): `resume` and `attach` send the caller's environment anew.
 */
function forgetEnvironment(record: WorkerRecord): void {
	record.env = {};
}
