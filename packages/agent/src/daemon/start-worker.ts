/**
 * Asking the supervisor for a session's worker: the first step of a run in the daemon, kept light
 * (no session or model code) so that the command line can take it before it loads its views.
 */
import { connectSupervisor, type DaemonContext, daemonContext, plainEnv, unwrap } from "./client.js";
import type { WorkerOwner, WorkerSessionOptions } from "./protocol.js";
import type { SupervisorClient } from "./requests.js";

/** A worker the supervisor started (or found serving the session: `attached`), listening on `socket`. */
export interface StartedWorker {
	key: string;
	socket: string;
	attached?: boolean;
}

/**
 * Ask the supervisor (started when none runs) for a new worker; resolves with its key and socket
 * once it listens. `attached`: the session asked for was open in a live worker, which is the one given.
 */
export async function startWorker(
	context: DaemonContext,
	options: WorkerSessionOptions,
	owner: WorkerOwner,
): Promise<StartedWorker> {
	const supervisor = (await connectSupervisor(context)) as SupervisorClient;
	try {
		return unwrap(await supervisor.request({ type: "start", options, owner, env: plainEnv(context.env) }));
	} finally {
		supervisor.close();
	}
}

/** `startWorker` for a view that stays (the terminal UI, the line chat): its worker outlives the view. */
export async function startResidentWorker(
	options: WorkerSessionOptions,
	env: NodeJS.ProcessEnv,
): Promise<StartedWorker> {
	return startWorker(daemonContext(env), options, "resident");
}

/**
 * A worker started for a view that never came (the command line failed before it connected): the
 * supervisor stops it, as `prime-agent shutdown <agent>` would (its session, if any, is saved).
 */
export async function stopUnusedWorker(worker: StartedWorker, env: NodeJS.ProcessEnv): Promise<void> {
	if (worker.attached) return;
	const supervisor = await connectSupervisor(daemonContext(env), false);
	try {
		await supervisor?.request({ type: "stop", key: worker.key });
	} finally {
		supervisor?.close();
	}
}
