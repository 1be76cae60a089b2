/**
 * The staged-workflow tracker's state: requirement revisions, the monotonic lock, test results,
 * the cumulative suite and goal readiness, plus the session-local diagnostics that status reports.
 * Kept in the broker's session state (`broker-state.json`), changed only under its lock.
 */

/** What a clean result means for the workflow (shown in clean capsules and deltas of a staged goal). */
export type WorkflowStage = "COMMAND_CLEAN" | "STAGE_CLEAN" | "GOAL_READY";

/** One recorded test run. */
export interface WorkflowTest {
	/** The requirements revision current when it ran. */
	revision: number;
	result: "pass" | "fail" | "unknown";
	/** Tests the run counted (its suite size). */
	tests: number;
	/** Normalized headline, e.g. `TEST_RESULT PASS 9/9`. */
	headline: string | null;
	/** Observation id ("" when the output could not be archived). */
	id: string;
	/** Position in the tracker's event order (`WorkflowState.seq`). */
	seq: number;
}

export interface WorkflowState {
	version: 1;
	/** Event counter: every user message and observation the tracker takes in gets the next number. */
	seq: number;
	/** Advances with every user message that brings requirements (a bare lock declaration does not). */
	requirementsRevision: number;
	/** Monotonic: once locked, nothing (a later message, a branch sync) unlocks. */
	locked: boolean;
	lockedAtRevision: number | null;
	lockedSeq: number | null;
	/** A user message opened with a stage or lock declaration: the work is explicitly staged (monotonic). */
	staged: boolean;
	/** The newest goal on the branch as the host last reported it; null when there is none. */
	goal: { id: string; status: string } | null;
	latestTest: WorkflowTest | null;
	/** The largest suite seen: a smaller (focused) run never replaces it. */
	cumulativeSuite: WorkflowTest | null;
	/** A failed test run, or failing test ids or exceptions in a failed result. */
	lastDecisiveFailure: { id: string; seq: number; headline: string | null } | null;
	firstCleanSuccess: { id: string; seq: number } | null;
	/** Provider calls the host reported, and the context tokens they carried, summed. */
	contextTurns: number;
	contextTurnsAfterFirstCleanSuccess: number;
	contextTokens: number;
	/** Sub-agent launches observed, and those launched after a capsule was shown. */
	childLaunches: number;
	childLaunchesAfterCapsules: number;
	/** Ids of user messages already counted (so a branch seen again is not counted twice). */
	seenUserMessages: string[];
	/** Ids of sub-agents already counted. */
	seenChildren: string[];
}

/** What the host tells the tracker (before each provider call, typically). Every field is optional. */
export interface WorkflowSync {
	/** User messages on the active branch, oldest first; each is taken in once, by its id. */
	userMessages?: readonly { id: string; text: string }[];
	/** The newest goal on the branch (null: none); absent leaves the goal as it is. */
	goal?: { id: string; status: string } | null;
	/** A provider call is about to be made with this many context tokens. */
	contextTurn?: { tokens: number };
	/** Sub-agent launches observed, each once by its id; `afterCapsule` when it came after a capsule. */
	childLaunches?: readonly { id: string; afterCapsule: boolean }[];
}

/** What the tracker takes from one observation. */
export interface WorkflowObservation {
	id: string;
	/** The run's status as a capsule states it (`runStatus`). */
	status: "pass" | "fail" | "unknown";
	/** Tests counted by a recognised terminal summary; null when it is not a test run. */
	tests: number | null;
	headline: string | null;
	/** Evidence against readiness: a failed test run, or failing ids or exceptions in a failed result. */
	decisiveFailure: boolean;
	/** A clean success: a passing terminal summary, or exit 0 with no failure evidence. */
	clean: boolean;
}
