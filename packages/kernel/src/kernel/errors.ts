/** How a kernel process ended. */
export interface KernelExit {
	code: number | null;
	signal: string | null;
	/**
	 * How a kernel on a server ended, as a predicate ("died on the server at ...", "lost its
	 * connection to ..."): there is no exit code to show.
	 */
	reason?: string;
}

export function describeExit(exit: KernelExit): string {
	if (exit.reason) return exit.reason;
	if (exit.signal) return `was killed by signal ${exit.signal}`;
	return `exited with code ${exit.code}`;
}

/** The kernel process is not running: it died, was killed or shut down. Call `restart()`. */
export class KernelNotRunningError extends Error {
	override name = "KernelNotRunningError";
}

/** The kernel could not be started (it exited, timed out, or its startup code raised). */
export class KernelStartError extends Error {
	override name = "KernelStartError";
}
