/** Ways to drive a session: print (`-p`), JSON lines (`--mode json`), and a line-by-line chat. */
export { runChatMode } from "./chat.js";
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
export { handleInterrupts, type InterruptAction, type InterruptHandle } from "./interrupts.js";
export { runJsonMode } from "./json.js";
export { describeAutonomousEvent, describeGoalEvent, onLongRunningEvents } from "./long-running.js";
export { describeNotice } from "./notices.js";
export { describeModelFailure, describeOutcome, type OutcomeReport } from "./outcome.js";
export { runPrintMode } from "./print.js";
export { describeRefusedRun, describeRunEnd, type RunEnd, runEndMessage, runReport } from "./run-end.js";
export { captureConsole, describeSessionLine, isSessionLine } from "./session-lines.js";
export { TextRenderer, type TextStreams } from "./text-renderer.js";
