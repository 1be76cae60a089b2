/** Ways to drive a session: print (`-p`), JSON lines (`--mode json`), and a line-by-line chat. */
export { type ChatOptions, chatMode } from "./chat.js";
export { describeChildEvent } from "./children.js";
export {
	type InteractiveContext,
	type InteractiveUi,
	loadTerminalUi,
	type ProjectReview,
	type SessionChanges,
	sameSession,
	TERMINAL_UI_PACKAGE,
} from "./interactive.js";
export { type InterruptAction, type InterruptHandle, oneShotInterrupts } from "./interrupts.js";
export { attachJsonMode, jsonMode } from "./json.js";
export { describeAutonomousEvent, describeGoalEvent, onLongRunningEvents } from "./long-running.js";
export { describeNotice } from "./notices.js";
export { describeModelFailure, describeOutcome, type OutcomeReport } from "./outcome.js";
export { printMode } from "./print.js";
export { describeRefusedRun, describeRunEnd, runReport } from "./run-end.js";
export { captureConsole, describeSessionLine, isSessionLine } from "./session-lines.js";
export { TextRenderer, type TextStreams } from "./text-renderer.js";
