/**
 * The client side of the daemon: reach the supervisor (starting it when none runs), ask it for a
 * worker, and connect to that worker as a view.
 */
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
import { agentDir, diskWriteError, probeWrite } from "../home/index.js";
import { sayHello } from "./handshake.js";
import { ProtocolClient, type Reply, type WorkerWelcome } from "./protocol.js";
import type { SupervisorClient, SupervisorRequests, WorkerClient, WorkerRequests } from "./requests.js";

type WorkerHello = { oneShot: boolean; answers: boolean };

import {
	type DaemonPaths,
	daemonPaths,
	ensureDaemonDir,
	isSameProcess,
	liveWorkers,
	readJson,
	readOrCreateToken,
	readWorkerRecord,
	workerKeys,
	writeWorkerRecord,
} from "./state.js";

// The supervisor always runs built; loaded from the sources (the tests), this module points at the build.
const SUPERVISOR_MAIN = fileURLToPath(
	new URL(
		import.meta.url.endsWith(".ts") ? "../../dist/daemon/supervisor-main.js" : "./supervisor-main.js",
		import.meta.url,
	),
);
/** How long a client waits for a supervisor it started to listen. */
const SUPERVISOR_START_MS = 15_000;

/** The environment variable that keeps sessions in the calling process (no daemon). */
export const IN_PROCESS_ENV = "PRIME_AGENT_IN_PROCESS";

/** Whether this run keeps its session in-process (`PRIME_AGENT_IN_PROCESS=1`) instead of the daemon. */
export function inProcess(env: NodeJS.ProcessEnv): boolean {
	const value = env[IN_PROCESS_ENV]?.trim();
	return value !== undefined && value !== "" && value !== "0";
}

export interface DaemonContext {
	paths: DaemonPaths;
	token: string;
	env: NodeJS.ProcessEnv;
}

export function daemonContext(env: NodeJS.ProcessEnv): DaemonContext {
	const paths = daemonPaths(agentDir(env));
	try {
		return { paths, token: readOrCreateToken(paths), env };
	} catch (error) {
		const refusal = diskWriteError(error, paths.token);
		throw new DaemonUnavailableError(
			refusal?.message ?? `The daemon's folder ${paths.dir} cannot be used: ${(error as Error).message}`,
			`Fix it, or run in this process with ${IN_PROCESS_ENV}=1.`,
			"Fix the daemon's folder to run sessions in the background.",
		);
	}
}

/** A reply's data (typed by its request's kind); a failed reply thrown as a `UserError`. */
export function unwrap<T>(reply: Reply<T>): T {
	if (!reply.ok)
		throw new UserError(
			reply.message,
			reply.hint || "See `prime-agent status`.",
			(reply.exitCode ?? ExitCode.usage) as ExitCodeValue,
		);
	return reply.data as T;
}

/** How long a worker or supervisor has to answer `hello` (a stopped process never does). */
const HELLO_WAIT_MS = 20_000;

async function helloWorker(client: WorkerClient, token: string, extra: WorkerHello): Promise<WorkerWelcome> {
	const reply = await sayHello(client, token, extra, HELLO_WAIT_MS);
	if (!reply.ok) client.close();
	if (!reply.ok && reply.closed)
		throw new UserError(
			`The agent's worker did not answer (${reply.message.replace(/\.$/, "")}); it may be stopped or overloaded.`,
			"`prime-agent agents` shows its state; `prime-agent shutdown <agent> --force` stops it.",
			ExitCode.usage,
		);
	return unwrap(reply);
}

/**
 * The daemon cannot serve this client at all (its folder is unusable, or another version runs): a
 * run can go on in this process instead; `later` says how to get background sessions back.
 */
export class DaemonUnavailableError extends UserError {
	constructor(
		message: string,
		hint: string,
		readonly later: string,
	) {
		super(message, hint, ExitCode.usage);
	}
}

/** The supervisor that answers is from another build (another protocol): it cannot serve this client. */
export class DaemonVersionError extends DaemonUnavailableError {
	constructor(readonly detail: string) {
		super(
			`The agent daemon running is from another version of prime-agent (${detail}).`,
			`\`prime-agent shutdown\` stops it (its agents' sessions are saved); or run in this process with ${IN_PROCESS_ENV}=1.`,
			"`prime-agent shutdown` stops the old daemon (its agents' sessions are saved).",
		);
	}
}

/** Whether a refused `hello` says the protocols differ (the wording every build's supervisor uses). */
function versionMismatch(reply: Reply): string | undefined {
	if (reply.ok) return undefined;
	const match = /^The daemon speaks protocol (\S+), the client (\S+)\.$/.exec(reply.message);
	return match ? `it speaks protocol ${match[1]}, this one ${match[2]}` : undefined;
}

/**
 * Stop a supervisor of another version, which refuses this client's commands: SIGTERM it, then
 * its live workers (each saves its session), each stop intent written first so that no supervisor
 * restarts them. Only processes whose recorded start identity matches are signalled.
 */
export async function stopOtherVersion(paths: DaemonPaths): Promise<void> {
	const signal = (pid: number | undefined, startId: string | undefined) => {
		if (!isSameProcess(pid, startId)) return undefined;
		process.kill(pid as number, "SIGTERM");
		return { pid: pid as number, startId: startId as string };
	};
	const supervisor = readJson<{ pid: number; startId: string }>(paths.supervisor);
	const stopping = [signal(supervisor?.pid, supervisor?.startId)];
	for (const key of workerKeys(paths)) {
		const record = readWorkerRecord(paths, key);
		if (!record?.pid || !isSameProcess(record.pid, record.startId)) continue;
		writeWorkerRecord(paths, { ...record, stopRequestedAt: new Date().toISOString() });
		stopping.push(signal(record.pid, record.startId));
	}
	const deadline = Date.now() + SUPERVISOR_START_MS;
	while (stopping.some((process) => process && isSameProcess(process.pid, process.startId))) {
		if (Date.now() > deadline)
			throw new UserError(
				"The agent daemon of another version did not stop within 15 s.",
				`Stop it with \`kill ${stopping.map((process) => process?.pid).join(" ")}\`.`,
				ExitCode.usage,
			);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/** Connect to the supervisor; with `start`, start one when none answers. */
export async function connectSupervisor(context: DaemonContext, start = true): Promise<SupervisorClient | undefined> {
	const attempt = async () => {
		try {
			const client = await ProtocolClient.connect<SupervisorRequests>(context.paths.socket);
			const reply = await sayHello(client, context.token, {});
			// A supervisor that is going away (or lost the race to start) closes without answering: try again.
			if (!reply.ok && reply.closed) return undefined;
			if (!reply.ok) client.close();
			const other = versionMismatch(reply);
			if (other) throw new DaemonVersionError(other);
			unwrap(reply);
			return client;
		} catch (error) {
			if (error instanceof UserError) throw error;
			return undefined;
		}
	};
	const first = await attempt();
	if (first || !start) return first;
	ensureDaemonDir(context.paths);
	const log = openSync(context.paths.log, "a", 0o600);
	const child = spawn(process.execPath, [SUPERVISOR_MAIN], {
		env: { ...context.env, PRIME_AGENT_DIR: agentDir(context.env) },
		detached: true,
		stdio: ["ignore", log, log],
	});
	child.unref();
	let failed: number | null | undefined;
	child.once("exit", (code) => {
		if (code !== 0) failed = code;
	});
	const deadline = Date.now() + SUPERVISOR_START_MS;
	while (Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 50));
		const client = await attempt();
		if (client) return client;
		// It died starting (0: another supervisor holds the lock, which is tried above): say why at once.
		if (failed !== undefined) {
			const refusal = probeWrite(context.paths.supervisor, "run the command again");
			if (refusal) throw refusal;
			throw new UserError(
				`The agent daemon could not start (it exited with code ${failed}).`,
				`See ${context.paths.log}, or run in this process with ${IN_PROCESS_ENV}=1.`,
				ExitCode.usage,
			);
		}
	}
	throw new UserError(
		"The agent daemon did not start.",
		`See ${context.paths.log}, or run in this process with ${IN_PROCESS_ENV}=1.`,
		ExitCode.usage,
	);
}

/**
 * Connect to the supervisor for a command that reads or stops agents (`status`, `shutdown`,
 * `doctor`): none is started for nothing, but workers still running without one (it died) get one,
 * which adopts them before it answers, so that what the command says and does covers them.
 * Undefined when no supervisor runs and no worker is left.
 */
export async function connectSupervisorForAgents(context: DaemonContext): Promise<SupervisorClient | undefined> {
	const running = await connectSupervisor(context, false);
	if (running || liveWorkers(context.paths).length === 0) return running;
	return connectSupervisor(context, true);
}

/** Connect to a worker's socket as a view. */
export async function connectWorker(
	context: DaemonContext,
	socket: string,
	oneShot: boolean,
	answers = false,
): Promise<{ client: WorkerClient; welcome: WorkerWelcome }> {
	let client: WorkerClient;
	try {
		client = await ProtocolClient.connect<WorkerRequests>(socket);
	} catch (error) {
		throw new UserError(
			`The agent's worker does not answer (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`,
			"`prime-agent agents` shows its state; `prime-agent attach <agent>` starts a saved one again.",
			ExitCode.usage,
		);
	}
	const welcome = await helloWorker(client, context.token, { oneShot, answers });
	return { client, welcome };
}

/** Plain environment variables for a worker (the client's, so keys and PATH match the caller's shell). */
export function plainEnv(env: NodeJS.ProcessEnv): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [name, value] of Object.entries(env))
		if (value !== undefined && name !== IN_PROCESS_ENV) out[name] = value;
	return out;
}
