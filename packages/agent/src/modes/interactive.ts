import type { ExitCodeValue } from "../errors.js";
import type { AgentPaths } from "../home/index.js";
import type { SessionLink } from "../link/index.js";
import type { ProjectCodeItem } from "../trust/index.js";
import type { TypeAhead } from "./type-ahead.js";

/** The package that holds the full terminal UI; resolved by name when `prime-agent` starts. */
export const TERMINAL_UI_PACKAGE = "prime-agent-tui";

/** What a terminal UI may change when it starts another session (`/model`, `/resume`, `/fork`, `/new`). */
export interface SessionChanges {
	/** `provider/id`. */
	model?: string;
	/** A session id, unique prefix or path. */
	resume?: string;
	/** A session to fork into a new one. */
	fork?: string;
	/** With `resume` or `fork`: the entry to continue from (where `/tree` moved the conversation). */
	at?: string;
}

/** Resume (or fork) a session where its conversation is now, not where its file ends. */
export function sameSession(session: { path: string; persisted: boolean; leafId: string | null }): SessionChanges {
	if (!session.persisted) return {};
	return { resume: session.path, ...(session.leafId ? { at: session.leafId } : {}) };
}

/** What `prime-agent` hands a terminal UI: the session to drive and a way to change it. */
export interface InteractiveContext {
	/** The session: in a background worker, or in this process with `PRIME_AGENT_IN_PROCESS=1`. */
	link: SessionLink;
	/**
	 * Start another session with the command line's options changed: the current one is stopped
	 * first (its kernel variables are saved), and the UI drives the new one. Throws (a `UserError`
	 * for what the user can fix) when the new one cannot start; the old one is already gone then, so
	 * the UI resumes it by path.
	 */
	switchSession(changes: SessionChanges): Promise<SessionLink>;
	/** The agent home's files (models, keys, sessions) for pickers. */
	paths: AgentPaths;
	stdin: NodeJS.ReadStream;
	stdout: NodeJS.WriteStream;
	env: NodeJS.ProcessEnv;
	/**
	 * The keys typed before the UI was ready (while the session or its worker started): the UI
	 * calls `take` right before it reads the terminal, in the same tick, and shows them in its editor.
	 */
	typeAhead?: Pick<TypeAhead, "take">;
}

/** The project's code that would run and is not approved, for the user to review before the session starts. */
export interface ProjectReview {
	/** The project root. */
	root: string;
	/** Each file or folder, with why it is asked about (`not approved`, `changed since it was approved`). */
	items: (ProjectCodeItem & { state: string })[];
}

/** The module a terminal UI package exports. */
export interface InteractiveUi {
	runInteractiveMode(context: InteractiveContext): Promise<ExitCodeValue>;
	/**
	 * Ask on the terminal whether the project's code in `review` may run; resolves true when the
	 * user approves all of it (it is then recorded), false to start without it (asked again next
	 * time). Called before the session starts, only when something is not approved.
	 */
	reviewProject?(review: ProjectReview): Promise<boolean>;
	/**
	 * Draw a screen saying the session is starting, shown until `runInteractiveMode` draws the UI
	 * (or `erase`, when an error comes first): the terminal is not blank while a worker starts.
	 */
	showStartingScreen?(stdout: NodeJS.WriteStream, cwd: string): { erase(): void };
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
