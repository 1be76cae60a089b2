import { isGoalReady, isStagedGoal, notReadyReason, workflowStage } from "./tracker.js";
import type { WorkflowState, WorkflowTest } from "./types.js";

/** While requirements are unlocked: a clean result is never completion. */
export const UNLOCKED_GUARD =
	"Requirements are not locked: keep the active goal open and do not call goal.complete(); more requirements may follow.";
/** Locked, but no current post-lock cumulative pass yet. */
export const COMPLETION_GUARD =
	"Requirements are locked. Keep the goal open until the cumulative suite of the current requirements revision passes after the lock with no later failure; then complete it.";
/** GOAL_READY. */
export const GOAL_READY_GUARD =
	"Call await goal.complete() now. Do not inspect the goal API, read source, reconstruct requirements, run probes, or rerun an unchanged suite unless new evidence appears.";

/** The one guard that fits the state: ready, locked but not ready, or unlocked. */
export function workflowGuard(state: WorkflowState): string {
	if (isGoalReady(state)) return GOAL_READY_GUARD;
	return state.locked ? COMPLETION_GUARD : UNLOCKED_GUARD;
}

function testText(test: WorkflowTest): string {
	return `${test.tests} test${test.tests === 1 ? "" : "s"} ${test.result.toUpperCase()}`;
}

/** `9 tests PASS at revision 2, after the lock`, `... (stale: requirements are at revision 3)`, or `none`. */
export function cumulativeText(state: WorkflowState): string {
	const suite = state.cumulativeSuite;
	if (suite === null) return "none";
	const afterLock = state.lockedSeq !== null && suite.seq > state.lockedSeq ? ", after the lock" : "";
	const stale =
		suite.revision === state.requirementsRevision
			? ""
			: ` (stale: requirements are at revision ${state.requirementsRevision})`;
	return `${testText(suite)} at revision ${suite.revision}${afterLock}${stale}`;
}

const yesNo = (value: boolean) => (value ? "yes" : "no");

/** The compact state line: `requirements_revision=2 locked=yes cumulative_suite=9 tests PASS at revision 2, after the lock goal_ready=yes`. */
export function workflowFields(state: WorkflowState): string {
	return `requirements_revision=${state.requirementsRevision} locked=${yesNo(state.locked)} cumulative_suite=${cumulativeText(state)} goal_ready=${yesNo(isGoalReady(state))}`;
}

/**
 * Lines a clean capsule or delta carries during staged work under an active goal: the state
 * (COMMAND_CLEAN, STAGE_CLEAN or GOAL_READY) with the compact fields, then the one guard. None
 * otherwise. `brief` leaves the fields out (a clean capsule with less than its usual 768 bytes keeps
 * the state and the guard within its budget).
 */
export function cleanResultLines(state: WorkflowState, brief = false): string[] {
	if (!isStagedGoal(state)) return [];
	const stage = `WORKFLOW ${workflowStage(state)}`;
	return [brief ? stage : `${stage}: ${workflowFields(state)}`, workflowGuard(state)];
}

/**
 * The `WORKFLOW` section of the task context during staged work under an active goal: the compact
 * state and one guard; null otherwise. Equal state gives equal text (no timestamps), so an
 * unchanged state reuses the same message.
 */
export function workflowSection(state: WorkflowState): string | null {
	if (!isStagedGoal(state)) return null;
	const latest = state.latestTest;
	const latestText = latest ? `${testText(latest)} at revision ${latest.revision}` : "none";
	const stage = isGoalReady(state) ? "GOAL_READY " : "";
	return `WORKFLOW\n${stage}${workflowFields(state)} latest_test=${latestText}\n${workflowGuard(state)}`;
}

function oneDecimal(value: number): string {
	return (Math.round(value * 10) / 10).toFixed(1);
}

/**
 * The status lines (`prime_context status`, `/pc status`): the workflow fields, then the
 * follow-up-cost diagnostics. `visibleBytesSaved` is the broker's figure, for the load per KiB saved.
 */
export function describeWorkflow(state: WorkflowState, visibleBytesSaved: number): string[] {
	const latest = state.latestTest;
	const lock = state.locked ? `yes (since revision ${state.lockedAtRevision ?? "?"})` : "no";
	const goal = state.goal ? `${state.goal.status} (${state.goal.id})` : "none";
	const staged = state.staged ? "yes" : "no (no message opened with a stage or lock declaration)";
	const reason = notReadyReason(state);
	const first = state.firstCleanSuccess;
	const kib = visibleBytesSaved / 1024;
	const calls = `${state.contextTokens} context tokens over ${state.contextTurns} call${state.contextTurns === 1 ? "" : "s"}`;
	const load =
		state.contextTurns === 0
			? `n/a (no provider calls reported; ${oneDecimal(kib)} KiB saved)`
			: kib > 0
				? `${oneDecimal(state.contextTokens / kib)} (${calls}; ${oneDecimal(kib)} KiB saved)`
				: `n/a (${calls}; nothing saved yet)`;
	return [
		`workflow requirements_revision: ${state.requirementsRevision}`,
		`workflow locked: ${lock}`,
		`workflow staged: ${staged}; goal: ${goal}`,
		`workflow latest_test_revision: ${latest ? latest.revision : "none"}`,
		`workflow latest_test_result: ${latest ? `${testText(latest)}${latest.id ? ` (${latest.id})` : ""}` : "none"}`,
		`workflow cumulative_suite: ${cumulativeText(state)}${state.cumulativeSuite?.id ? ` (${state.cumulativeSuite.id})` : ""}`,
		`workflow goal_ready: ${reason === null ? "yes (GOAL_READY)" : `no (${reason})`}`,
		`workflow context turns after the first clean success: ${first ? `${state.contextTurnsAfterFirstCleanSuccess} (first clean success ${first.id || "not archived"})` : "0 (no clean success yet)"}`,
		`workflow child launches after capsules: ${state.childLaunchesAfterCapsules} (of ${state.childLaunches} observed)`,
		`workflow context-token load per KiB saved: ${load}`,
	];
}
