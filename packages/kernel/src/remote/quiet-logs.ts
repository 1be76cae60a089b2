/**
 * @jupyterlab/services writes "Starting WebSocket: <url>" and "Connection lost, reconnecting in N
 * seconds." with console.log/warn, which would land in the middle of a terminal UI or of `-p`
 * output. Those two lines (and only they) are dropped; every other console call passes through.
 */
const CLIENT_NOISE = /^(Starting WebSocket:|Connection lost, reconnecting in )/;
let installed = false;

export function quietClientLogs(): void {
	if (installed) return;
	installed = true;
	for (const level of ["log", "warn"] as const) {
		const original = console[level].bind(console);
		console[level] = (...args: unknown[]) => {
			if (typeof args[0] === "string" && CLIENT_NOISE.test(args[0])) return;
			original(...args);
		};
	}
}
