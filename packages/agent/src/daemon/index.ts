/**
 * Background sessions: a per-user supervisor, one worker process per session tree, and clients
 * that are views of a worker (JSON lines over a user-only Unix socket, see `protocol.ts`).
 */
export {
	connectSupervisor,
	connectSupervisorForAgents,
	connectWorker,
	DaemonUnavailableError,
	DaemonVersionError,
	daemonContext,
	IN_PROCESS_ENV,
	inProcess,
	stopOtherVersion,
} from "./client.js";
export {
	describeAgent,
	NO_PICK,
	runAgentsCommand,
	runAttach,
	runInWorker,
	runScheduleCli,
	runShutdownCommand,
	runStatusCommand,
	runUiInWorker,
} from "./commands.js";
export {
	type AgentInfo,
	DAEMON_PROTOCOL_VERSION,
	LineConnection,
	ProtocolClient,
	type WorkerOwner,
	type WorkerSessionOptions,
	type WorkerWelcome,
} from "./protocol.js";
export type { SupervisorClient, WorkerClient } from "./requests.js";
export {
	daemonPaths,
	isSameProcess,
	liveWorkers,
	processStartId,
	readSessionRecord,
	readWorkerRecord,
	workerKeys,
	writeSessionRecord,
	writeWorkerRecord,
} from "./state.js";
export { KEPT_FINISHED_ONE_SHOTS, RESTART_DELAYS_MS, SUPERVISOR_IDLE_EXIT_MS } from "./supervisor.js";
export { DEFAULT_WORKER_TIMINGS } from "./worker.js";
export { WorkerLink } from "./worker-link.js";
