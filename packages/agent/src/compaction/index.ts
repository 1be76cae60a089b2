/** Compaction: summarise the older part of a long session, keep the recent part and the kernel. */
export {
	type CompactionBudget,
	type CompactionDetails,
	type CompactionSettings,
	type CompactOptions,
	type CompactResult,
	compactionBudget,
	compactionSettingsFrom,
	compactSession,
	DEFAULT_COMPACTION_SETTINGS,
	type PreparedCompaction,
	prepareCompaction,
	shouldCompact,
} from "./compact.js";
export { type CutPoint, findCutPoint, isValidCutPoint } from "./cut-point.js";
export { collectFileActivity, type FileActivity } from "./file-tracking.js";
export { COMPACT_REQUEST_TYPE, type CompactionRequester, compactRequestHandler } from "./kernel-request.js";
export {
	IPYTHON_STATE_TYPE,
	ipythonStateMessage,
	type KernelListing,
	type KernelName,
	listKernelNames,
} from "./kernel-state.js";
export { answerReserve, fitOneRequest, fitOutputToWindow, outputRoom } from "./output-budget.js";
export { DEFAULT_EXCERPT_LIMITS, type ExcerptLimits, resultExcerpt } from "./result-excerpt.js";
export { SUMMARY_SECTIONS, serializeConversation, summaryRequest } from "./summary-prompt.js";
export {
	contextTokens,
	estimateEntryTokens,
	estimateTokens,
	requestTokens,
	type ToolDefinition,
} from "./tokens.js";
