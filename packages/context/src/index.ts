/**
 * Prime Context: keeps large tool output out of a model's context without losing it, and keeps the
 * current task visible. Host-independent; hosts usually start from `openContextSession`.
 */

export {
	ArchiveError,
	type ArchiveWriter,
	CHUNK_BYTES,
	copyObservations,
	defaultSessionId,
	formatObservationId,
	isSessionId,
	type ObservationFacts,
	type OpenArchiveOptions,
	openSessionArchive,
	type ReadLinesOptions,
	resolveAgentDir,
	resolveContextRoot,
	SESSION_ID_RULE,
	type SessionArchive,
} from "./archive/index.js";
export {
	type BrokerOptions,
	closeSelectionThread,
	createBroker,
	STATE_FILE as BROKER_STATE_FILE,
	selectionThreadJobs,
	selectionThreadRunning,
} from "./broker/index.js";
export {
	buildStructuredCapsule,
	type CapsuleBudgets,
	capsuleBudgets,
	type StructuredCapsule,
	type StructuredCapsuleInput,
} from "./capsule/index.js";
export {
	CONFIG_FILE_NAME,
	CONFIG_RULES,
	type ConfigProblem,
	configFiles,
	describeProblem,
	findRepoRoot,
	type LoadedConfig,
	loadConfig,
	validateConfig,
} from "./config/index.js";
export { type LineDelta, lineDelta, sectionDelta } from "./delta/index.js";
export {
	classifyLine,
	createOutcomeScanner,
	type LineKind,
	type OutcomeHints,
	type OutcomeScanner,
	outcomeSignature,
	parseOutcome,
	stripAnsi,
} from "./outcome/index.js";
export {
	CLI_HINTS,
	describeMetrics,
	describeRecord,
	PC_HINTS,
	parseRecoveryRequest,
	type RecoveryAction,
	RecoveryArgumentError,
	type RecoveryContext,
	type RecoveryHints,
	type RecoveryLimits,
	type RecoveryOptions,
	type RecoveryRequest,
	type RecoveryResponse,
	recoveryLimits,
	runRecovery,
	TOOL_HINTS,
	usageOf,
} from "./recovery/index.js";
export { type ContextSession, type ContextSessionOptions, type DoctorReport, openContextSession } from "./session.js";
export {
	applyTaskUpdate,
	EMPTY_TASK,
	fileTaskStore,
	isEmptyTask,
	memoryTaskStore,
	renderTask,
	TASK_LIMITS,
	type TaskSnapshot,
	type TaskStore,
	TaskStoreError,
	type TaskUpdate,
	TaskUpdateError,
} from "./task/index.js";
export * from "./types.js";
export {
	COMPLETION_GUARD,
	cleanResultLines,
	declaresLock,
	declaresStage,
	describeWorkflow,
	emptyWorkflow,
	GOAL_READY_GUARD,
	isGoalReady,
	isStagedGoal,
	normalizeWorkflow,
	observeWorkflow,
	syncWorkflow,
	UNLOCKED_GUARD,
	type WorkflowObservation,
	type WorkflowStage,
	type WorkflowState,
	type WorkflowStore,
	type WorkflowSync,
	type WorkflowTest,
	workflowSection,
	workflowStage,
	workflowStore,
} from "./workflow/index.js";
