export { type FamilyOptions, type ParentFamily, wireFamily } from "./family.js";
export { RLM_REQUESTS, rlmHostHandlers } from "./host-handlers.js";
export { ChildManager, type ChildManagerOptions, firstMessage, type ParentLink } from "./manager.js";
export { NOTICE_CUSTOM_TYPE, PREVIEW_LIMIT, preview } from "./notices.js";
export { DEFAULT_MAX_DEPTH, MAX_NAME_LENGTH, resolveMaxDepth, SpawnRefused } from "./options.js";
export type {
	ChildEvent,
	ChildHandle,
	ChildLaunchSpec,
	ChildRunOutcome,
	ChildRuntime,
	ChildStatus,
	NoticeKind,
} from "./types.js";
export {
	addUsage,
	CHILD_USAGE_ENTRY,
	type ChildUsageData,
	emptyUsage,
	type SessionUsage,
	sessionUsage,
} from "./usage.js";
