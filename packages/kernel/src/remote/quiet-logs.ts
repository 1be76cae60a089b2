/**
 * @jupyterlab/services writes "Starting WebSocket: <url>", "Kernel: <status> (<id>)",
 * "Connection lost, reconnecting in N seconds." and, deleting a kernel already gone, 'The kernel
 * "<id>" does not exist on the server' with console.debug/warn, which would land in the
 * middle of a terminal UI or of `-p` output. Those lines (and only they) are dropped; every other
 * console call passes through.
 */
const CLIENT_NOISE =
	/^(Starting WebSocket:|Kernel: [a-z]+ \(|Connection lost, reconnecting in |The kernel "[^"]*" does not exist on the server$)/;
let installed = false;

export function quietClientLogs(): void {
	if (installed) return;
	installed = true;
	for (const level of ["debug", "log", "warn"] as const) {
		const original = console[level].bind(console);
		console[level] = (...args: unknown[]) => {
			if (typeof args[0] === "string" && CLIENT_NOISE.test(args[0])) return;
			original(...args);
		};
	}
}
