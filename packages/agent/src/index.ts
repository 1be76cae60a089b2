/**
 * Prime Agent: a coding agent whose model has one tool, a persistent IPython kernel.
 */
export {
	CHILD_USAGE_ENTRY,
	type ChildEvent,
	type ChildStatus,
	type SessionUsage,
	sessionUsage,
} from "./children/index.js";
export * from "./cli/index.js";
export * from "./compaction/index.js";
export * from "./doctor/index.js";
export { ExitCode, type ExitCodeValue, UserError } from "./errors.js";
export * from "./extensions/index.js";
export * from "./home/index.js";
export * from "./link/index.js";
export * from "./modes/index.js";
export * from "./orchestrator/index.js";
export * from "./prompt/index.js";
export * from "./providers/index.js";
export * from "./session/index.js";
export * from "./startup/index.js";
export * from "./tools/index.js";
export * from "./trust/index.js";
