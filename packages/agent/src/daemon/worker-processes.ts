/**
 * The supervisor's worker processes: it starts them (a spare when one is loaded), watches them
 * (its own children by their exit, adopted ones by polling), counts their crashes and restarts them
 * after 250 ms, 1 s, 5 s (a fourth crash marks the tree failed with the reason), and stops them on
 * request, the intent written before the kill. A worker a request started that exits before its
 * session has started is no crash: the request fails with why, and it is not restarted. Requests
 * about one session file run in turn (`turns`), so two workers never write one session.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { probeWrite } from "../home/index.js";
import type { WorkerSessionOptions } from "./protocol.js";
import { InTurn, realPath } from "./session-files.js";
import { SPARE_ENV, type SpareState, SpareWorkers } from "./spare-worker.js";
import {
	type DaemonPaths,
	isSameProcess,
	processStartId,
	readSessionRecord,
	WORKER_START_FAILED,
	type WorkerRecord,
	workerDir,
	workerKeys,
} from "./state.js";
import type { WorkerRecords } from "./worker-records.js";

/** Waits before restarting a crashed worker: the first, second and third crash. */
export const RESTART_DELAYS_MS = [250, 1000, 5000] as const;
/** Finished one-shot (`-p`, JSON) records kept for `attach` and `agents`; older ones are removed when a supervisor starts. */
export const KEPT_FINISHED_ONE_SHOTS = 50;
/** A crash this long after the previous one starts the count again. */
const CRASH_WINDOW_MS = 10 * 60_000;
/** How long a worker may take to start its session (node, the session, its extensions: seconds). */
const WORKER_START_MS = 60_000;
/** The end of a worker's log a start failure quotes: this many lines, at most `LOG_END_CHARS`. */
const LOG_END_LINES = 20;
const LOG_END_CHARS = 4000;

const WORKER_MAIN = fileURLToPath(new URL("./worker-main.js", import.meta.url));

/** Why a worker could not start, as a request's error reply says it. */
export interface StartFailure {
	message: string;
	hint: string;
	exitCode?: number;
	/** The worker's log, when the hint sends the user there (the message ends with what it wrote). */
	log?: string;
}

/** How an agent is started again: `changes`, another model or entry (`/model`). */
export interface StartAgain {
	env?: Record<string, string>;
	changes?: { model?: string; at?: string };
	resetCrashes?: boolean;
}

interface Tracked {
	child?: ChildProcess;
	poll?: NodeJS.Timeout;
	restart?: NodeJS.Timeout;
	exited?: Promise<void>;
}

export class WorkerProcesses {
	private readonly tracked = new Map<string, Tracked>();
	/** Agents a spare is being given to (it may still be loading): they read as starting meanwhile. */
	private readonly adopting = new Set<string>();
	/** A worker process loaded ahead of the next start (see `SpareWorkers`). */
	private readonly spares: SpareWorkers;
	/** Start, resume, restart and stop requests per session file, in the order they came. */
	readonly turns = new InTurn();

	constructor(
		private readonly paths: DaemonPaths,
		private readonly records: WorkerRecords,
	) {
		this.spares = new SpareWorkers(paths.dir, WORKER_MAIN, process.env[SPARE_ENV] !== "0");
	}

	/** The spare worker's state (`prime-agent status`, and the start-up bench waits for `ready`). */
	get spare(): SpareState {
		return this.spares.state;
	}

	close(): void {
		this.spares.close();
		for (const tracked of this.tracked.values()) {
			clearInterval(tracked.poll);
			clearTimeout(tracked.restart);
		}
	}

	live(key: string): boolean {
		const record = this.records.read(key);
		return isSameProcess(record?.pid, record?.startId);
	}

	/** A worker of `key` is on its way: a restart after a crash is pending, or a spare is being given to it. */
	due(key: string): boolean {
		return this.tracked.get(key)?.restart !== undefined || this.adopting.has(key);
	}

	/**
	 * The agent (other than `except`) that serves session `path`: a live worker, or one whose restart
	 * after a crash is due. One on its way out is waited for first (it is saving the session).
	 */
	async holderOf(path: string, except?: string): Promise<{ key: string; sessionId: string } | undefined> {
		for (const key of workerKeys(this.paths)) {
			if (key === except) continue;
			const session = readSessionRecord(this.paths, key)?.session;
			// One file however it is named (a symlinked home, /tmp and /private/tmp).
			if (!session || realPath(session.path) !== path) continue;
			if (this.live(key) && this.stopping(key)) await this.stopFor(key);
			if (this.live(key) || this.due(key)) return { key, sessionId: session.id };
		}
		return undefined;
	}

	/** Whether the live worker of `key` has stopped its session and is on its way out. */
	stopping(key: string): boolean {
		const pid = this.records.read(key)?.pid;
		const session = readSessionRecord(this.paths, key);
		return session?.stoppedAt !== undefined && session.pid === pid;
	}

	/** The real path of the session file agent `key` serves (none before its session has started). */
	sessionPathOf(key: string): string | undefined {
		const path = readSessionRecord(this.paths, key)?.session?.path;
		return path && realPath(path);
	}

	/** Write the intent to stop `key` (before anything else, so no restart or supervisor starts it again). */
	markStop(key: string): void {
		const record = this.records.read(key);
		if (!record) return;
		this.cancelRestart(key);
		record.stopRequestedAt = new Date().toISOString();
		try {
			this.records.keep(record);
		} catch (error) {
			// The intent on disk is for a supervisor started later; this one stops the worker regardless
			// (a failed write here, on a full disk, left every agent running).
			process.stderr.write(`Could not record the stop of agent ${key}: ${(error as Error).message}\n`);
		}
	}

	/** Write the intent to stop, then stop the worker (SIGTERM: it saves; `force`: SIGKILL). */
	async stop(key: string, force: boolean): Promise<void> {
		this.markStop(key);
		await this.stopFor(key, force ? "SIGKILL" : "SIGTERM");
	}

	/**
	 * Wait until the worker of `key` has exited (after `signal`, when given: SIGUSR2 stops it to be
	 * started again, its views following it); SIGKILL after 20 s, as a stop does.
	 */
	async stopFor(key: string, signal?: NodeJS.Signals): Promise<void> {
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
	startAgain(key: string, how: StartAgain): Promise<StartFailure | undefined> {
		this.cancelRestart(key);
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
		return this.spawn(key).then((failure) => {
			// A model that would not start is not kept: `attach` starts the agent as it was.
			if (failure && how.changes) {
				const failed = this.records.read(key);
				if (failed) this.records.keep({ ...failed, options: before });
			}
			return failure;
		});
	}

	/** On start: adopt a live worker, restart one that died without being asked to, leave the rest saved. */
	recover(key: string): void {
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
	pruneFinishedOneShots(): void {
		const finished = workerKeys(this.paths).filter((key) => {
			const record = this.records.read(key);
			return record?.owner === "oneshot" && !record.failedReason && !this.live(key) && !this.due(key);
		});
		// workerKeys lists oldest first.
		for (const key of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED_ONE_SHOTS)))
			rmSync(workerDir(this.paths, key), { recursive: true, force: true });
	}

	/**
	 * Start the worker of `key` (the spare, when there is one); resolves once it serves its socket,
	 * or with why it could not start. `afterCrash`: the restart of a crashed worker, which no request
	 * waits for, so its exit before its session started counts as another crash; a request's start
	 * that fails is that request's error, and is not restarted.
	 */
	async spawn(key: string, afterCrash = false): Promise<StartFailure | undefined> {
		const dir = workerDir(this.paths, key);
		const asked = this.records.read(key) as WorkerRecord;
		const cwd = existsSync(asked.options.cwd) ? asked.options.cwd : dir;
		const env = { ...asked.env, PRIME_AGENT_DIR: join(this.paths.dir, "..") };
		const log = join(dir, "worker.log");
		// What this worker writes to the log starts here (an earlier worker of the agent wrote before it).
		const logStart = existsSync(log) ? statSync(log).size : 0;
		/** A failure the log tells more of: its last lines, then where it is. */
		const seeLog = (message: string, hint: string): StartFailure => {
			const end = logEnd(log, logStart);
			return { message: `${message}${end ? ` Its log ends:\n${end}` : " It wrote nothing to its log."}`, hint, log };
		};
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
				this.exited(key, pid, code, signal, !afterCrash);
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
					resolve(
						seeLog(
							`The worker did not start its session within ${WORKER_START_MS / 1000} s; it was stopped.`,
							`See ${log}, then try again.`,
						),
					);
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
					// A user error says why and what to do; anything else is told by the log.
					if (reason && session?.stopHint !== undefined)
						resolve({ message: reason, hint: session.stopHint, exitCode: session.exitCode });
					else
						resolve({
							...seeLog(
								reason ?? `The worker ${describeExit(exitInfo.code, exitInfo.signal)} before its session started.`,
								`See ${log}.`,
							),
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

	private cancelRestart(key: string): void {
		const tracked = this.tracked.get(key);
		clearTimeout(tracked?.restart);
		if (tracked) tracked.restart = undefined;
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

	/** `requested`: a request waits for this worker's start (see `spawn`). */
	private exited(
		key: string,
		pid: number,
		code: number | null,
		signal: NodeJS.Signals | null,
		requested = false,
	): void {
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
			this.notRestarted(record, `the session could not start: ${reason ?? "see worker.log"}`);
			return;
		}
		// Exited before its session started, with a request waiting for it: that request fails with
		// why; a restart would start an agent its client was told could not start.
		if (requested && !(session?.pid === pid && session.session)) {
			this.notRestarted(record, `the worker ${describeExit(code, signal)} before its session started`);
			return;
		}
		this.crashed(
			key,
			code === null && signal === null ? "the worker died" : `the worker ${describeExit(code, signal)}`,
		);
	}

	/** A worker that could not start its session: the agent is failed with `reason` (`attach` tries again). */
	private notRestarted(record: WorkerRecord, reason: string): void {
		record.failedReason = reason;
		forgetEnvironment(record);
		this.records.keep(record);
		process.stderr.write(`Agent ${record.key}: ${reason}; not restarted.\n`);
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
			const path = this.sessionPathOf(key);
			void this.turns
				.run(path, async () => {
					// Started meanwhile (`attach`, a `--resume` sent here): nothing is due any more.
					if (!tracked.restart) return;
					tracked.restart = undefined;
					const latest = this.records.read(key);
					// A stop asked for meanwhile wins, and so does another worker that took the session.
					if (!latest || latest.stopRequestedAt || latest.failedReason) return;
					if (path && (await this.holderOf(path, key))) return;
					await this.spawn(key, true);
				})
				.catch((error) => process.stderr.write(`Agent ${key} could not be restarted: ${(error as Error).message}\n`));
		}, delay);
	}
}

/** A worker process for agent `key`, from nothing (no spare), writing to `log`. */
function startWorkerProcess(key: string, log: string, cwd: string, env: Record<string, string>): ChildProcess {
	const fd = openSync(log, "a", 0o600);
	const child = spawn(process.execPath, [WORKER_MAIN, key], { cwd, env, detached: true, stdio: ["ignore", fd, fd] });
	closeSync(fd);
	child.unref();
	return child;
}

/** The last lines written to `log` from byte `start` on (empty when none, or unreadable). */
function logEnd(log: string, start: number): string {
	let text: string;
	try {
		const fd = openSync(log, "r");
		try {
			// Only the end is read: a long-lived agent's log can be large.
			const { size } = fstatSync(fd);
			const from = Math.max(start, size - 4 * LOG_END_CHARS);
			const bytes = Buffer.alloc(Math.max(0, size - from));
			readSync(fd, bytes, 0, bytes.length, from);
			text = bytes.toString("utf8");
		} finally {
			closeSync(fd);
		}
	} catch {
		return "";
	}
	const end = text.trimEnd().split("\n").slice(-LOG_END_LINES).join("\n");
	return end.length > LOG_END_CHARS ? `…${end.slice(-LOG_END_CHARS)}` : end;
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
