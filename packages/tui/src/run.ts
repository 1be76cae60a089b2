import { ProcessTerminal } from "@mariozechner/pi-tui";
import type { InteractiveContext } from "prime-agent";
import { ExitCode, type ExitCodeValue } from "prime-agent/view";
import { InteractiveApp } from "./app.js";
import { eraseStartingScreen } from "./starting-screen.js";

/**
 * The interactive mode `prime-agent` starts on a terminal: the UI until the user leaves, then a
 * line saying how to come back to the session.
 */
export async function runInteractiveMode(context: InteractiveContext): Promise<ExitCodeValue> {
	const app = new InteractiveApp(new ProcessTerminal(), context);
	const release = giveTerminalBackOnExit(app);
	try {
		// Taken in the tick the UI starts reading the terminal: no key falls between the two.
		const typed = context.typeAhead?.take() ?? "";
		// The UI draws where the starting screen began.
		eraseStartingScreen();
		const running = app.run();
		app.typeAhead(typed);
		const exit = await running;
		if ("message" in exit) context.stdout.write(`${exit.message}\n`);
		if (app.farewell) context.stdout.write(`${app.farewell}\n`);
		return exit.code as ExitCodeValue;
	} finally {
		release();
	}
}

/**
 * However the process ends, the terminal is left as it was found (cursor shown, bracketed paste
 * and key reporting off, the prompt below the UI): SIGTERM and SIGHUP leave the way Ctrl-D does
 * (the turn stopped, the session saved), and a crash stops the UI before Node prints the error.
 * Returns the function that removes the handlers.
 */
function giveTerminalBackOnExit(app: InteractiveApp): () => void {
	const removers = (["SIGTERM", "SIGHUP"] as const).map((signal) => {
		const leave = () => void app.exit({ code: ExitCode.interrupted, message: `Stopped by ${signal}.` });
		process.on(signal, leave);
		return () => process.off(signal, leave);
	});
	const stop = () => app.stop();
	process.on("uncaughtExceptionMonitor", stop);
	process.on("exit", stop);
	return () => {
		for (const remove of removers) remove();
		process.off("uncaughtExceptionMonitor", stop);
		process.off("exit", stop);
	};
}
