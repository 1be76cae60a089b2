/**
 * The per-user supervisor: started on demand by the first client, it starts one worker process per
 * session tree, restarts a crashed one (see `WorkerProcesses`), stops them on request, and on its
 * own start re-adopts the workers still alive from their records. It never runs a model or a kernel
 * itself. With nothing to supervise for a few minutes it exits (the next client starts one again).
 * A record the disk refuses (full, read-only) is kept in memory and written again later (see
 * `WorkerRecords`); meanwhile its agent reads as failed with the disk's reason, and is not restarted.
 */
import { existsSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { UserError } from "../errors.js";
import { removeLeftoverTempFiles } from "../home/index.js";
import { SUPERVISOR_REFUSALS } from "./handshake.js";
import { type AgentInfo, replyError } from "./protocol.js";
import { supervisorRequests } from "./requests.js";
import { serve } from "./serve.js";
import { type DaemonPaths, readJson, readSessionRecord, type WorkerRecord, workerKeys } from "./state.js";
import { type SupervisorState, supervisorHandlers } from "./supervisor-handlers.js";
import { IdleExit } from "./supervisor-idle.js";
import { takeSupervisorLock } from "./supervisor-lock.js";
import { WorkerProcesses } from "./worker-processes.js";
import { WorkerRecords } from "./worker-records.js";

export { SUPERVISOR_IDLE_EXIT_MS } from "./supervisor-idle.js";
export { KEPT_FINISHED_ONE_SHOTS, RESTART_DELAYS_MS } from "./worker-processes.js";

export class Supervisor implements SupervisorState {
	private server: Server | undefined;
	/** Worker records; one the disk refuses is kept here and written again later. */
	readonly records: WorkerRecords;
	readonly workers: WorkerProcesses;
	private readonly idle: IdleExit;

	/** `exit`: what ends the process once the supervisor has closed (idle, its home gone, `stop_all`). */
	constructor(
		readonly paths: DaemonPaths,
		private readonly token: string,
		idleExitMs: number,
		private readonly exit: () => void = () => process.exit(0),
	) {
		this.records = new WorkerRecords(paths, (line) => process.stderr.write(`${line}\n`));
		this.workers = new WorkerProcesses(paths, this.records);
		this.idle = new IdleExit(
			idleExitMs,
			// Records still to be written keep it too: they would be lost.
			() =>
				this.records.pending > 0 ||
				workerKeys(this.paths).some((key) => this.workers.live(key) || this.workers.due(key)),
			() => {
				this.close();
				this.exit();
			},
		);
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
		const handlers = supervisorHandlers(this);
		this.server = createServer((socket) => {
			const connection = serve(socket, {
				token: this.token,
				refusals: SUPERVISOR_REFUSALS,
				parser: supervisorRequests,
				welcome: () => ({ client: undefined, data: { pid: process.pid } }),
				handlers,
				failed: (id, error) => {
					const user = error instanceof UserError ? error : undefined;
					return {
						...replyError(id, error.message, user?.hint ?? "See `prime-agent status`."),
						...(user ? { exitCode: user.exitCode } : {}),
					};
				},
			});
			this.idle.connected(connection.closed);
		});
		await new Promise<void>((resolve, reject) => {
			this.server?.once("error", reject);
			this.server?.listen(this.paths.socket, () => resolve());
		});
		for (const key of workerKeys(this.paths)) this.workers.recover(key);
		this.workers.pruneFinishedOneShots();
		this.idle.arm();
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
			this.exit();
		}, 2000);
		timer.unref();
	}

	/** Stop every worker, then the supervisor, then the process. */
	shutdown(force: boolean): void {
		void this.stopAll(force).then(() => this.exit());
	}

	/** Stop every worker, then the supervisor. */
	async stopAll(force: boolean): Promise<void> {
		// Every stop intent first, so that no restart under way starts a worker again.
		for (const key of workerKeys(this.paths)) this.workers.markStop(key);
		await Promise.all(workerKeys(this.paths).map((key) => this.workers.stop(key, force)));
		this.close();
	}

	close(): void {
		this.workers.close();
		this.idle.close();
		this.records.close();
		this.server?.close();
		rmSync(this.paths.socket, { force: true });
		const holder = readJson<{ pid: number }>(this.paths.supervisor);
		if (holder?.pid === process.pid) rmSync(this.paths.supervisor, { force: true });
	}

	resolve(ref: string): string {
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
			return matches.find((key) => this.workers.live(key)) ?? resident.at(-1) ?? (matches.at(-1) as string);
		}
		throw new Error(
			matches.length === 0
				? `No agent ${ref}; \`prime-agent agents\` lists them.`
				: `"${ref}" names ${matches.length} agents; give more of the id.`,
		);
	}

	list(): AgentInfo[] {
		return workerKeys(this.paths).map((key) => this.info(key));
	}

	info(key: string): AgentInfo {
		const record = this.records.read(key) as WorkerRecord;
		const session = readSessionRecord(this.paths, key);
		const live = this.workers.live(key);
		const failedReason = record.failedReason ?? this.records.refusal(key);
		const state: AgentInfo["state"] = failedReason
			? "failed"
			: live
				? session?.session && session.pid === record.pid
					? session.busy
						? "running"
						: "idle"
					: "starting"
				: this.workers.due(key)
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
}
