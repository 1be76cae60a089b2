/**
 * Kills every live kernel when the host exits, or receives SIGINT/SIGTERM/SIGHUP that nothing else
 * in the app handles (the signal is then re-raised so the host dies as it would have), so no kernel
 * outlives its host. (A host killed with SIGKILL runs no handler: `spawnGuardedGroup` and the
 * kernel's own host-pid watch cover that.) Handlers are installed once per process, on the first
 * kernel started.
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
			// The app handles this signal itself and may well keep running (a TUI's Ctrl-C): leave the
			// kernels alone; if it does exit, the exit handler kills them.
			if (process.listenerCount(signal) > 1) return;
			killAll();
			// Listening to a signal disables Node's default action (exit): restore it and re-raise, so
			// the app dies exactly as it would have without this handler.
			process.removeListener(signal, onSignal);
			process.kill(process.pid, signal);
		};
		process.on(signal, onSignal);
	}
}
