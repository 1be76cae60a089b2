/**
 * Kills every live kernel when the host exits or receives SIGINT/SIGTERM/SIGHUP, so no kernel
 * outlives its host. (A host killed with SIGKILL runs no handler: the kernel's own host-pid watch
 * covers that.) Handlers are installed once per process, on the first kernel started.
 */

const live = new Set<() => void>();
let installed = false;

/** Registers a synchronous kill; returns the function that unregisters it. */
export function killOnHostExit(kill: () => void): () => void {
	install();
	live.add(kill);
	return () => live.delete(kill);
}

function killAll(): void {
	for (const kill of live) {
		try {
			kill();
		} catch {
			// Already gone.
		}
	}
	live.clear();
}

function install(): void {
	if (installed) return;
	installed = true;
	process.on("exit", killAll);
	for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
		const onSignal = () => {
			killAll();
			// Listening to a signal disables Node's default action (exit). If nobody else listens,
			// restore that default and re-raise, so the app still dies as it would have.
			if (process.listenerCount(signal) === 1) {
				process.removeListener(signal, onSignal);
				process.kill(process.pid, signal);
			}
		};
		process.on(signal, onSignal);
	}
}
