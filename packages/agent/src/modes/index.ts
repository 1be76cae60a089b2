/**
 * Ways to drive a session: print (`-p`), JSON lines (`--mode json`, `attach --mode json`) and the
 * line chat, each over a `SessionLink` (in process or through a worker), and the terminal UI's
 * loading; with what they say about a session's events and runs.
 */
export { chatMode } from "./chat.js";
export {
	type InteractiveContext,
	type InteractiveUi,
	loadTerminalUi,
	type ProjectReview,
	type SessionChanges,
	sameSession,
} from "./interactive.js";
export { type InterruptAction, oneShotInterrupts } from "./interrupts.js";
export { attachJsonMode, jsonMode } from "./json.js";
export { describeModelFailure, describeOutcome } from "./outcome.js";
export { printMode } from "./print.js";
export { describeRefusedRun, describeRunEnd } from "./run-end.js";
export { captureConsole, describeSessionLine, isSessionLine } from "./session-lines.js";
