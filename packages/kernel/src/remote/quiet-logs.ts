/**
 * @jupyterlab/services writes "Starting WebSocket: <url>" and "Kernel: <status> (<id>)" with
 * console.debug, and "Connection lost, reconnecting in N seconds." with console.warn, which would
 * land in the middle of a terminal UI or of `-p` output. Those lines (and only they) are dropped;
 * every other console call passes through.
 */
const CLIENT_NOISE = /^(Starting WebSocket:|Connection lost, reconnecting in |Kernel: \w+ \([0-9a-f-]+\)$)/;
let installed = false;

export function quietClientLogs(): void {
	if (installed) return;
	installed = true;
	for (const level of ["log", "warn", "debug", "info"] as const) {
		const original = console[level].bind(console);
		console[level] = (...args: unknown[]) => {
			if (typeof args[0] === "string" && CLIENT_NOISE.test(args[0])) return;
			original(...args);
		};
	}
}
