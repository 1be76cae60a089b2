/**
 * `prime-agent/view`: what a view of a session (the terminal UI) needs at its start, light to load
 * (no model library, kernel client or session code, which the worker holds): a view over the
 * daemon draws its first frame without them, and loads `prime-agent` when a command needs more.
 */
export { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
export { sameSession } from "../modes/interactive.js";
export { describeModelFailure } from "../modes/model-failure.js";
export { captureConsole, describeSessionLine, isSessionLine } from "../modes/session-lines.js";
export { parseSlashCommand, promptText } from "../orchestrator/slash-commands.js";
export { messageText } from "../session/messages.js";
