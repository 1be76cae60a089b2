/** Ways to drive a session: print (`-p`), JSON lines (`--mode json`), and a line-by-line chat. */
export { runChatMode } from "./chat.js";
export { handleInterrupts, type InterruptAction, type InterruptHandle } from "./interrupts.js";
export { runJsonMode } from "./json.js";
export { describeOutcome, type OutcomeReport } from "./outcome.js";
export { runPrintMode } from "./print.js";
export { TextRenderer, type TextStreams } from "./text-renderer.js";
