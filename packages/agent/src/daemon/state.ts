/**
 * The daemon's files under the agent home:
 *
 *   daemon/                 0700
 *     token                 0600, the per-user token every connection must present
 *     supervisor.sock       the supervisor's socket
 *     supervisor.json       pid and process start identity of the running supervisor
 *     supervisor.log
 *     workers/<key>/        one folder per session tree
 *       worker.json         written by the supervisor: options, pid + start identity, stop intent, crashes
 *       session.json        written by the worker: its session, activity, clients
 *       queue.json          written by the worker while something is queued (see queue-file.ts)
 *       worker.sock, worker.log
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentPaths, PRIVATE_FILE_MODE, writePrivateJson } from "../home/index.js";
import { isSameProcess } from "../process-lock/index.js";
import type { WorkerOwner, WorkerSessionOptions } from "./protocol.js";

export { isSameProcess, processStartId } from "../process-lock/index.js";

/** Exit code of a worker whose session could not start (a user error: not retried). */
export const WORKER_START_FAILED = 86;

/** Longest Unix socket path the platforms take (108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 103;

export interface DaemonPaths {
	dir: string;
	token: string;
	socket: string;
	supervisor: string;
	log: string;
	workers: string;
}

export function daemonPaths(agentHome: string): DaemonPaths {
	const dir = agentPaths(agentHome).daemon;
	return {
		dir,
		token: join(dir, "token"),
		socket: join(dir, "supervisor.sock"),
		supervisor: join(dir, "supervisor.json"),
		log: join(dir, "supervisor.log"),
		workers: join(dir, "workers"),
	};
}

export function workerDir(paths: DaemonPaths, key: string): string {
	return join(paths.workers, key);
}

export function workerSocket(paths: DaemonPaths, key: string): string {
	return join(workerDir(paths, key), "worker.sock");
}

/** The daemon folder, created (or tightened) to 0700, and a check that socket paths fit. */
export function ensureDaemonDir(paths: DaemonPaths): void {
	mkdirSync(paths.workers, { recursive: true, mode: 0o700 });
	chmodSync(paths.dir, 0o700);
	chmodSync(paths.workers, 0o700);
	const longest = workerSocket(paths, "00000000");
	if (Buffer.byteLength(longest) > MAX_SOCKET_PATH)
		throw new Error(
			`The daemon's socket path ${longest} is longer than the ${MAX_SOCKET_PATH} bytes a Unix socket allows; set PRIME_AGENT_DIR to a shorter folder.`,
		);
}

/** The per-user token, made on first use (0600). */
export function readOrCreateToken(paths: DaemonPaths): string {
	ensureDaemonDir(paths);
	if (existsSync(paths.token)) {
		const token = readFileSync(paths.token, "utf8").trim();
		if (token) return token;
	}
	const token = randomBytes(32).toString("hex");
	writeFileSync(paths.token, `${token}\n`, { mode: PRIVATE_FILE_MODE });
	chmodSync(paths.token, PRIVATE_FILE_MODE);
	return token;
}

/** The supervisor's record of one worker. */
export interface WorkerRecord {
	key: string;
	owner: WorkerOwner;
	options: WorkerSessionOptions;
	env: Record<string, string>;
	pid?: number;
	/** The process start identity of `pid` (see `processStartId`): a reused pid does not match. */
	startId?: string;
	/** Written before the worker is stopped on purpose, so no supervisor starts it again. */
	stopRequestedAt?: string;
	crashes: number;
	lastCrashAt?: string;
	failedReason?: string;
	createdAt: string;
}

/** The worker's record of its session. */
export interface WorkerSessionRecord {
	pid: number;
	session?: { id: string; path: string; cwd: string };
	busy: boolean;
	lastActivity: string;
	clients: number;
	/** The leaf when the last client detached. */
	detachedAt?: string | null;
	/** Set when the worker ends on purpose (a finished one-shot, eviction, shutdown). */
	stoppedAt?: string;
	stopReason?: string;
	/** With a session that could not start: what to do, and the exit code for the client. */
	stopHint?: string;
	exitCode?: number;
	heartbeat?: string;
	schedules: number;
}

export function readJson<T>(path: string): T | undefined {
	try {
		return JSON.parse(readFileSync(path, "utf8")) as T;
	} catch {
		return undefined;
	}
}

export function readWorkerRecord(paths: DaemonPaths, key: string): WorkerRecord | undefined {
	return readJson<WorkerRecord>(join(workerDir(paths, key), "worker.json"));
}

export function writeWorkerRecord(paths: DaemonPaths, record: WorkerRecord): void {
	writePrivateJson(join(workerDir(paths, record.key), "worker.json"), record);
}

export function readSessionRecord(paths: DaemonPaths, key: string): WorkerSessionRecord | undefined {
	return readJson<WorkerSessionRecord>(join(workerDir(paths, key), "session.json"));
}

export function writeSessionRecord(paths: DaemonPaths, key: string, record: WorkerSessionRecord): void {
	writePrivateJson(join(workerDir(paths, key), "session.json"), record);
}

export function workerKeys(paths: DaemonPaths): string[] {
	if (!existsSync(paths.workers)) return [];
	return readdirSync(paths.workers)
		.filter((name) => existsSync(join(paths.workers, name, "worker.json")))
		.map((key) => ({ key, created: readWorkerRecord(paths, key)?.createdAt ?? "" }))
		.sort((a, b) => a.created.localeCompare(b.created))
		.map((entry) => entry.key);
}

/** The workers whose process still runs (its recorded start identity matches), by their records. */
export function liveWorkers(paths: DaemonPaths): { key: string; pid: number }[] {
	return workerKeys(paths).flatMap((key) => {
		const record = readWorkerRecord(paths, key);
		return record?.pid && isSameProcess(record.pid, record.startId) ? [{ key, pid: record.pid }] : [];
	});
}

export function newWorkerKey(): string {
	return randomBytes(4).toString("hex");
}
