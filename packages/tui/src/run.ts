import { ProcessTerminal } from "@mariozechner/pi-tui";
import type { ExitCodeValue, InteractiveContext } from "prime-agent";
import { InteractiveApp } from "./app.js";

/**
 * The interactive mode `prime-agent` starts on a terminal: the UI until the user leaves, then a
 * line saying how to come back to the session.
 */
export async function runInteractiveMode(context: InteractiveContext): Promise<ExitCodeValue> {
	const app = new InteractiveApp(new ProcessTerminal(), context);
	const exit = await app.run();
	const { session } = app.session;
	if ("message" in exit) context.stdout.write(`${exit.message}\n`);
	if (session.persisted) context.stdout.write(`Session saved: resume with \`prime-agent --resume ${session.id}\`.\n`);
	return exit.code as ExitCodeValue;
}
