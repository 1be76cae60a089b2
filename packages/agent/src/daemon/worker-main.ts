/**
 * A worker process: `node worker-main.js <key>`, started (detached, no terminal) by the supervisor.
 * It starts the session its record asks for, serves it, and exits 0 when it stops on purpose; a
 * session that cannot start exits with the user error's code after writing why.
 */
import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import { UserError } from "../errors.js";
import { agentDir } from "../home/index.js";
import { startSession } from "../startup/index.js";
import { type Adoption, SPARE_ARGUMENT } from "./spare-worker.js";
import { daemonPaths, readOrCreateToken, readWorkerRecord, WORKER_START_FAILED, writeSessionRecord } from "./state.js";
import { Worker, workerTimings } from "./worker.js";

const key = process.argv[2] === SPARE_ARGUMENT ? await adoption() : (process.argv[2] as string);
const paths = daemonPaths(agentDir(process.env));
const record = readWorkerRecord(paths, key);
if (!record) {
	process.stderr.write(`No worker record ${key} in ${paths.workers}.\n`);
	process.exit(WORKER_START_FAILED);
}
const token = readOrCreateToken(paths);
const { options } = record;
let worker: Worker | undefined;
try {
	const started = await startSession({
		cwd: options.cwd,
		env: process.env,
		model: options.model,
		continueLatest: options.continueLatest,
		resume: options.resume,
		fork: options.fork,
		at: options.at,
		tools: options.tools,
		thinkingLevel: options.thinkingLevel as ThinkingLevel | undefined,
		extensionPaths: options.extensionPaths,
		goal: options.goal,
		autonomous: options.autonomous,
		allowMissingKey: options.allowMissingKey,
		oneShot: record.owner === "oneshot",
		trustProject: options.trustProject,
		kernelUrl: options.kernelUrl,
		daemonAgent: key,
	});
	worker = new Worker({
		key,
		paths,
		token,
		oneShot: record.owner === "oneshot",
		started,
		timings: workerTimings(process.env),
	});
	await worker.start();
} catch (error) {
	const user = error instanceof UserError;
	// Why, for the supervisor; on a full disk this fails too, and the supervisor finds out itself.
	saveQuietly(() =>
		writeSessionRecord(paths, key, {
			pid: process.pid,
			busy: false,
			lastActivity: new Date().toISOString(),
			clients: 0,
			schedules: 0,
			stoppedAt: new Date().toISOString(),
			stopReason: (error as Error).message,
			...(user ? { stopHint: error.hint, exitCode: error.exitCode } : {}),
		}),
	);
	if (!user) process.stderr.write(`${(error as Error).stack}\n`);
	process.exit(WORKER_START_FAILED);
}
const running = worker as Worker;
// SIGTERM is how `prime-agent shutdown` (through the supervisor) stops a worker.
const REASONS = { SIGTERM: "it was shut down", SIGINT: "interrupted by SIGINT", SIGHUP: "hung up by SIGHUP" } as const;
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
	process.on(signal, () => void running.stop(REASONS[signal]));
// SIGUSR2: the supervisor starts it again at once (`/model` from a view): its views follow it.
process.on("SIGUSR2", () => void running.stop("started again on another model", true));
const reason = await running.stopped;
process.stderr.write(`Worker ${key} stopped: ${reason}\n`);
process.exit(0);

/**
 * A spare (`worker-main.js --spare`): its modules are loaded; it says so and waits for the agent it
 * is given, then runs as that agent's worker in its folder and environment. Its supervisor gone
 * first, there is nothing to wait for.
 */
function adoption(): Promise<string> {
	if (!process.connected) process.exit(0);
	return new Promise((resolve) => {
		process.once("disconnect", () => process.exit(0));
		process.once("message", (message: Adoption) => {
			process.removeAllListeners("disconnect");
			// Its environment is the client's, as a worker started for it would have (keys, PATH).
			for (const name of Object.keys(process.env)) delete process.env[name];
			Object.assign(process.env, message.env);
			try {
				process.chdir(message.cwd);
			} catch {
				// Gone meanwhile: the session says so when it starts (as a worker started there would).
			}
			process.disconnect();
			resolve(message.key);
		});
		process.send?.({ type: "ready" });
	});
}

function saveQuietly(write: () => void): void {
	try {
		write();
	} catch (error) {
		process.stderr.write(`Could not write this worker's record: ${(error as Error).message}\n`);
	}
}
