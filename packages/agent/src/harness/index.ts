/**
 * The continual harness: prompt notes, memories, procedures and sub-agent specs kept in a session
 * store and a global one, an index of them after the base system prompt, refinements (review,
 * plan, atomic edits) with rollback, and the automatic schedule.
 */
export { AutoRefineSchedule } from "./auto-refine.js";
export { checkKind, checkName, HarnessError } from "./entries.js";
export { HARNESS_FILE, Harness, type HarnessDirs, REFINEMENTS_FILE } from "./harness.js";
export {
	HARNESS_INDEX_ENTRY,
	type HarnessIndexRecord,
	type RecordedIndex,
	recordedIndex,
} from "./index-record.js";
export { withFileLock } from "./locked-file.js";
export { parsePlan } from "./plan.js";
export { cutText, HARNESS_SECTION_TITLE, rankEntries, rankingKey, renderHarnessSection } from "./prompt-index.js";
export { describeRefinement, type RefineOutcome, rollbackRefinement, runRefinement } from "./refine.js";
export { PLANNING_SYSTEM_PROMPT, REVIEW_SYSTEM_PROMPT } from "./refine-prompts.js";
export { HarnessRuntime, type HarnessRuntimeOptions, type RefinementInput } from "./runtime.js";
export { type HarnessSettings, harnessSettingsFrom } from "./settings.js";
export { latestUserText, trajectoryText } from "./trajectory.js";
export * from "./types.js";
