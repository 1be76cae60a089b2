import { declaresLock, declaresStage, isBareLock } from "./declarations.js";
import type { WorkflowObservation, WorkflowStage, WorkflowState, WorkflowSync, WorkflowTest } from "./types.js";

/** Ids remembered to count each user message and sub-agent once; past this the oldest are forgotten. */
export const SEEN_IDS_MAX = 5_000;

export function emptyWorkflow(): WorkflowState {
	return {
		version: 1,
		seq: 0,
		requirementsRevision: 0,
		locked: false,
		lockedAtRevision: null,
		lockedSeq: null,
		staged: false,
		goal: null,
		latestTest: null,
		cumulativeSuite: null,
		lastDecisiveFailure: null,
		firstCleanSuccess: null,
		contextTurns: 0,
		contextTurnsAfterFirstCleanSuccess: 0,
		contextTokens: 0,
		childLaunches: 0,
		childLaunchesAfterCapsules: 0,
		seenUserMessages: [],
		seenChildren: [],
	};
}

const count = (value: unknown): number =>
	Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0;

function isTest(value: unknown): value is WorkflowTest {
	const t = value as WorkflowTest | null;
	return (
		typeof t === "object" &&
		t !== null &&
		Number.isSafeInteger(t.revision) &&
		["pass", "fail", "unknown"].includes(t.result) &&
		Number.isSafeInteger(t.tests) &&
		typeof t.id === "string" &&
		Number.isSafeInteger(t.seq)
	);
}

function strings(value: unknown): string[] {
	return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/**
 * The workflow as stored, checked field by field: a missing or malformed field takes its empty
 * value (a state file from before the tracker, or one damaged by hand, still loads).
 */
export function normalizeWorkflow(raw: unknown): WorkflowState {
	const fresh = emptyWorkflow();
	if (typeof raw !== "object" || raw === null) return fresh;
	const v = raw as Partial<Record<keyof WorkflowState, unknown>>;
	const goal = v.goal as WorkflowState["goal"];
	const failure = v.lastDecisiveFailure as WorkflowState["lastDecisiveFailure"];
	const first = v.firstCleanSuccess as WorkflowState["firstCleanSuccess"];
	const locked = v.locked === true;
	return {
		version: 1,
		seq: count(v.seq),
		requirementsRevision: count(v.requirementsRevision),
		locked,
		lockedAtRevision: locked && Number.isSafeInteger(v.lockedAtRevision) ? (v.lockedAtRevision as number) : null,
		lockedSeq: locked && Number.isSafeInteger(v.lockedSeq) ? (v.lockedSeq as number) : null,
		staged: v.staged === true || locked,
		goal:
			typeof goal === "object" && goal !== null && typeof goal.id === "string" && typeof goal.status === "string"
				? { id: goal.id, status: goal.status }
				: null,
		latestTest: isTest(v.latestTest) ? v.latestTest : null,
		cumulativeSuite: isTest(v.cumulativeSuite) ? v.cumulativeSuite : null,
		lastDecisiveFailure:
			typeof failure === "object" &&
			failure !== null &&
			typeof failure.id === "string" &&
			Number.isSafeInteger(failure.seq)
				? { id: failure.id, seq: failure.seq, headline: typeof failure.headline === "string" ? failure.headline : null }
				: null,
		firstCleanSuccess:
			typeof first === "object" && first !== null && typeof first.id === "string" && Number.isSafeInteger(first.seq)
				? { id: first.id, seq: first.seq }
				: null,
		contextTurns: count(v.contextTurns),
		contextTurnsAfterFirstCleanSuccess: count(v.contextTurnsAfterFirstCleanSuccess),
		contextTokens: count(v.contextTokens),
		childLaunches: count(v.childLaunches),
		childLaunchesAfterCapsules: count(v.childLaunchesAfterCapsules),
		seenUserMessages: strings(v.seenUserMessages),
		seenChildren: strings(v.seenChildren),
	};
}

function copy(state: WorkflowState): WorkflowState {
	return { ...state, seenUserMessages: [...state.seenUserMessages], seenChildren: [...state.seenChildren] };
}

function remember(list: string[], id: string): void {
	list.push(id);
	if (list.length > SEEN_IDS_MAX) list.splice(0, list.length - SEEN_IDS_MAX);
}

/**
 * Takes in what the host reports. User messages are counted once each, by id, so syncing a branch
 * again (or another branch that lacks some of them) never lowers the revision or unlocks: the lock
 * and the revision only ever move forward. A message with requirement text advances the revision; a
 * bare `REQUIREMENTS LOCKED` locks without advancing it. Pure: `state` is not changed.
 */
export function syncWorkflow(state: WorkflowState, sync: WorkflowSync): WorkflowState {
	const next = copy(state);
	const seen = new Set(next.seenUserMessages);
	for (const message of sync.userMessages ?? []) {
		if (seen.has(message.id)) continue;
		seen.add(message.id);
		remember(next.seenUserMessages, message.id);
		if (message.text.trim() === "") continue;
		next.seq++;
		const lock = declaresLock(message.text);
		if (!(lock && isBareLock(message.text))) next.requirementsRevision++;
		if (lock || declaresStage(message.text)) next.staged = true;
		if (lock && !next.locked) {
			next.locked = true;
			next.lockedAtRevision = next.requirementsRevision;
			next.lockedSeq = next.seq;
		}
	}
	if (sync.goal !== undefined) next.goal = sync.goal === null ? null : { id: sync.goal.id, status: sync.goal.status };
	if (sync.contextTurn) {
		next.contextTurns++;
		next.contextTokens += count(Math.round(sync.contextTurn.tokens));
		if (next.firstCleanSuccess) next.contextTurnsAfterFirstCleanSuccess++;
	}
	const children = new Set(next.seenChildren);
	for (const launch of sync.childLaunches ?? []) {
		if (children.has(launch.id)) continue;
		children.add(launch.id);
		remember(next.seenChildren, launch.id);
		next.childLaunches++;
		if (launch.afterCapsule) next.childLaunchesAfterCapsules++;
	}
	return next;
}

/**
 * Takes in one observation's outcome. A test run becomes the latest test; it becomes the cumulative
 * suite only when it counts at least as many tests as the largest suite seen, so a smaller focused
 * run never replaces it. Pure: `state` is not changed.
 */
export function observeWorkflow(state: WorkflowState, observation: WorkflowObservation): WorkflowState {
	const next = copy(state);
	next.seq++;
	if (observation.tests !== null) {
		const run: WorkflowTest = {
			revision: next.requirementsRevision,
			result: observation.status,
			tests: observation.tests,
			headline: observation.headline,
			id: observation.id,
			seq: next.seq,
		};
		next.latestTest = run;
		if (next.cumulativeSuite === null || observation.tests >= next.cumulativeSuite.tests) next.cumulativeSuite = run;
	}
	if (observation.decisiveFailure) {
		next.lastDecisiveFailure = { id: observation.id, seq: next.seq, headline: observation.headline };
	}
	if (observation.clean && observation.status !== "fail" && next.firstCleanSuccess === null) {
		next.firstCleanSuccess = { id: observation.id, seq: next.seq };
	}
	return next;
}

/** Why the goal is not ready, or null when it is. */
export function notReadyReason(state: WorkflowState): string | null {
	const suite = state.cumulativeSuite;
	if (!state.locked) return "requirements are not locked";
	if (suite === null) return "no cumulative suite has run";
	if (suite.revision !== state.requirementsRevision) {
		return `the cumulative suite is stale (revision ${suite.revision}; requirements are at revision ${state.requirementsRevision})`;
	}
	if (suite.result !== "pass") return "the cumulative suite of this revision did not pass";
	if (state.lockedSeq === null || suite.seq < state.lockedSeq) return "the cumulative suite passed before the lock";
	const failure = state.lastDecisiveFailure;
	if (failure && failure.seq > suite.seq) return `a later failure${failure.id ? ` (${failure.id})` : ""}`;
	return null;
}

/** GOAL_READY: locked, and the current revision's cumulative suite passed after the lock with no later decisive failure. */
export function isGoalReady(state: WorkflowState): boolean {
	return notReadyReason(state) === null;
}

/** The current revision's cumulative suite passed, with no decisive failure since. */
export function isStageClean(state: WorkflowState): boolean {
	const suite = state.cumulativeSuite;
	const failure = state.lastDecisiveFailure;
	return (
		suite !== null &&
		suite.revision === state.requirementsRevision &&
		suite.result === "pass" &&
		!(failure && failure.seq > suite.seq)
	);
}

/** What a clean result means now: the goal is ready, the stage is clean, or only the command was. */
export function workflowStage(state: WorkflowState): WorkflowStage {
	if (isGoalReady(state)) return "GOAL_READY";
	if (isStageClean(state)) return "STAGE_CLEAN";
	return "COMMAND_CLEAN";
}

/** Explicitly staged work under an active goal: the only time guards are shown to the model. */
export function isStagedGoal(state: WorkflowState): boolean {
	return state.staged && state.goal?.status === "active";
}
