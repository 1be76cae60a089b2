/**
 * The supervisor process: `node supervisor-main.js`, started detached by the first client that
 * finds no supervisor. Exits at once when another live supervisor holds the lock.
 */
import { UserError } from "../errors.js";
import { agentDir } from "../home/index.js";
import { daemonPaths, readOrCreateToken } from "./state.js";
import { SUPERVISOR_IDLE_EXIT_MS, Supervisor } from "./supervisor.js";

/**
 * With nothing to supervise for this long the supervisor exits; the next client starts one.
 * `PRIME_AGENT_SUPERVISOR_IDLE_MS` sets it (tests shorten it).
 */
const IDLE_EXIT_MS = Number(process.env.PRIME_AGENT_SUPERVISOR_IDLE_MS) || SUPERVISOR_IDLE_EXIT_MS;

const paths = daemonPaths(agentDir(process.env));
let supervisor: Supervisor;
try {
	supervisor = new Supervisor(paths, readOrCreateToken(paths), IDLE_EXIT_MS);
	if (!(await supervisor.start())) process.exit(0);
} catch (error) {
	// The client that started it sees the exit and says why (a disk that refuses writes, most often).
	const hint = error instanceof UserError ? ` ${error.hint}` : "";
	process.stderr.write(`The supervisor could not start: ${(error as Error).message}${hint}\n`);
	process.exit(1);
}
process.stderr.write(`Supervisor ${process.pid} listening on ${paths.socket}\n`);
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
	process.on(signal, () => {
		supervisor.close();
		process.exit(0);
	});
