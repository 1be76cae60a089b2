/**
 * The staged-workflow tracker: requirement revisions from user messages, a monotonic requirement
 * lock (only a declaration at the very start of a whole user message), test results, the
 * cumulative suite (never replaced by a smaller focused run; stale once requirements advance) and
 * goal readiness, shown as COMMAND_CLEAN, STAGE_CLEAN or GOAL_READY with one guard in clean capsules,
 * deltas and the task context of a staged active goal. Pure reducers; kept in the broker state.
 */
export { declaresLock, declaresStage, isBareLock } from "./declarations.js";
export { cleanLinesFor, workflowObservation } from "./observe.js";
export {
	COMPLETION_GUARD,
	cleanResultLines,
	cumulativeText,
	describeWorkflow,
	GOAL_READY_GUARD,
	UNLOCKED_GUARD,
	workflowFields,
	workflowGuard,
	workflowSection,
} from "./render.js";
export { type WorkflowStore, workflowStore } from "./store.js";
export {
	emptyWorkflow,
	isGoalReady,
	isStageClean,
	isStagedGoal,
	normalizeWorkflow,
	notReadyReason,
	observeWorkflow,
	SEEN_IDS_MAX,
	syncWorkflow,
	workflowStage,
} from "./tracker.js";
export type { WorkflowObservation, WorkflowStage, WorkflowState, WorkflowSync, WorkflowTest } from "./types.js";
