/** Autonomous mode: quality gates when the model would stop, the workspace fingerprint, limits, the report. */
export { GateArchive, type GateOutput } from "./archive.js";
export {
	type AutonomousEnd,
	type AutonomousEvent,
	type AutonomousHost,
	AutonomousRun,
	GATE_MESSAGE_TYPE,
	type GateResult,
} from "./controller.js";
export { WALK_HASH_MAX_BYTES, WALK_MAX_FILES, workspaceFingerprint } from "./fingerprint.js";
export { boundOutput, GATE_DRAIN_MS, GATE_OUTPUT_LIMIT, GATE_TIMEOUT_MS, type GateRun, runGate } from "./gates.js";
export {
	type AutonomousConfig,
	type AutonomousFlags,
	type AutonomousLimits,
	DEFAULT_AUTONOMOUS_LIMITS,
	minutesText,
	resolveAutonomousConfig,
} from "./limits.js";
export { autonomousReport, GATE_NOT_RERUN_TEXT, type LimitName, type ReportFacts } from "./report.js";
