import type { ExitCodeValue } from "../errors.js";
import type { StartedSession, StartOptions } from "../startup/index.js";

/** The package that holds the full terminal UI; resolved by name when `prime-agent` starts. */
export const TERMINAL_UI_PACKAGE = "prime-agent-tui";

/** What `prime-agent` hands a terminal UI: the started session and a way to change it. */
export interface InteractiveContext {
	/** The session to drive; the UI owns it until it hands another one back through `switchSession`. */
	started: StartedSession;
	/**
	 * Start another session with the command line's options changed (`/resume`, `/tree`, `/model`,
	 * `/fork`): the current one is disposed first (its kernel variables are saved), and the new one
	 * is disposed by the command line when the UI returns. Throws (a `UserError` for what the user can
	 * fix) when the new one cannot start; the old one is already gone then, so the UI resumes it by id.
	 */
	switchSession(changes: Partial<StartOptions>): Promise<StartedSession>;
	stdin: NodeJS.ReadStream;
	stdout: NodeJS.WriteStream;
	env: NodeJS.ProcessEnv;
}

/** The module a terminal UI package exports. */
export interface InteractiveUi {
	runInteractiveMode(context: InteractiveContext): Promise<ExitCodeValue>;
}

/**
 * Load the terminal UI, or say why the line chat is used instead. The agent must not import the
 * UI (it sits above the agent: `tui ──► agent`), so the package is resolved by name at run time:
 * installed beside the agent (the workspace links it), it is used; missing, the line chat runs.
 */
export async function loadTerminalUi(
	// A variable, not a literal, so TypeScript does not look for (and depend on) the package.
	name: string = TERMINAL_UI_PACKAGE,
): Promise<{ ui: InteractiveUi } | { missing: string }> {
	try {
		const loaded = (await import(name)) as Partial<InteractiveUi>;
		if (typeof loaded.runInteractiveMode !== "function")
			return { missing: `${name} does not export runInteractiveMode` };
		return { ui: loaded as InteractiveUi };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		// The package (or a file or dependency of it) is absent: the line chat runs, saying why.
		// Any other failure is a bug in the package and is shown as one.
		if (code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes(name))
			return { missing: `${name} could not be loaded (${String((error as Error).message).split("\n")[0]})` };
		throw error;
	}
}
