/** The system prompt and the project context files appended to it. */
export { CONTEXT_FILE_MAX_CHARS, CONTEXT_FILE_NAMES, findContextFiles } from "./context-files.js";
export { buildSystemPrompt, type SystemPromptOptions } from "./system-prompt.js";
