/**
 * Sessions: append-only JSONL trees, the context rebuilt from the active branch, and the
 * catalogue used by `--continue`, `--resume` and `prime-agent sessions`.
 */
export {
	describeChildren,
	describeContents,
	latestSession,
	listSessions,
	openSessionRef,
	resolveSessionRef,
	type SessionInfo,
} from "./catalog.js";
export {
	BRANCH_SUMMARY_TYPE,
	buildSessionContext,
	COMPACTION_SUMMARY_TYPE,
	type CompactionBoundary,
	compactionBoundary,
	compactionSummaryText,
	entryToMessage,
	type SessionContext,
} from "./context.js";
export { describeBranch, entryLabel } from "./describe.js";
export { type HostMessage, messageText, toLlmMessages } from "./messages.js";
export {
	type AppendOptions,
	afterDamage,
	type CreateSessionOptions,
	Session,
	unreadText,
} from "./session.js";
export { MAX_LINE_BYTES, MAX_NESTING } from "./session-file.js";
export { type SessionHolder, sessionLockPath } from "./session-lock.js";
export * from "./types.js";
