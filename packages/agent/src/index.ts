/**
 * Prime Agent: a coding agent whose model has one tool, a persistent IPython kernel.
 *
 * The public face of `prime-agent`, named one by one (test/public-face.test.ts holds the list):
 * everything else in `src/` is internal and may change. Extensions import `prime-agent/extensions`,
 * a view's first frame `prime-agent/view`, clients of background sessions `prime-agent/daemon`.
 */

/** The command line as a function (`prime-agent` itself calls it). */
export { type CliIo, runCli } from "./cli/index.js";
export { ExitCode, type ExitCodeValue, UserError } from "./errors.js";
/** What a view of a session (the terminal UI) is given: one link, in process or over the daemon. */
export {
	type LinkCommand,
	type LinkInterrupt,
	type LinkRunEnd,
	type LinkStatus,
	localLink,
	type QueuedInput,
	type SessionEvent,
	type SessionLink,
} from "./link/index.js";
export type { InteractiveContext, InteractiveUi, ProjectReview, SessionChanges } from "./modes/index.js";
/** The parts a started session is made of, for embedding them apart. */
export { AgentSession, type AgentSessionOptions, type RunOutcome, type SessionNotice } from "./orchestrator/index.js";
export { buildSystemPrompt, type SystemPromptOptions } from "./prompt/index.js";
/** Models and where their keys come from: the agent home's auth.json and models.json. */
export { Credentials, loadModelsFile, ModelRegistry } from "./providers/index.js";
export {
	type CompactionEntry,
	type CustomEntry,
	type CustomMessageEntry,
	describeContents,
	type HostMessage,
	listSessions,
	type MessageEntry,
	Session,
	type SessionEntry,
	type SessionInfo,
} from "./session/index.js";
/** Start a session (what the command line does), and the errors a user can fix before a run. */
export { type StartedSession, type StartOptions, startSession } from "./startup/index.js";
export {
	createIpythonTool,
	type KernelStatus,
	SessionKernel,
	type SessionKernelOptions,
	type StillBusyChoice,
} from "./tools/index.js";
