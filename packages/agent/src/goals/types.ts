/** The custom session entry holding a goal's state; the newest one on the active branch wins. */
export const GOAL_ENTRY = "goal";
/** The hidden message that starts or continues work on a goal. Only goals emit it. */
export const GOAL_CONTEXT = "goal_context";

export type GoalStatus = "active" | "paused" | "complete" | "budget_reached" | "cleared";

/** Limits of one goal; tokens are input + output tokens (cached tokens are not counted). */
export interface GoalBudget {
	tokens?: number;
	turns?: number;
	timeMs?: number;
}

/** What a goal has used while active: model turns, input + output tokens, working time. */
export interface GoalUsage {
	tokens: number;
	turns: number;
	timeMs: number;
}

/**
 * The data of a `goal` entry. Every change (set, pause, resume, complete, budget reached, clear,
 * and the usage at the end of each run) appends a new entry with the same `id`.
 */
export interface GoalData {
	id: string;
	objective: string;
	status: GoalStatus;
	/** What `goal.complete(summary)` said. */
	summary?: string;
	budget?: GoalBudget;
	used?: GoalUsage;
	/** Why the status changed when the host changed it (a budget, no progress). */
	reason?: string;
}

/** A goal operation that cannot be done; the message says why and what to do instead. */
export class GoalError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "GoalError";
	}
}

/** Longest objective or summary accepted, in characters. */
export const GOAL_TEXT_LIMIT = 16_384;
/** Continuations answered in a row without running anything before the goal is paused as stuck. */
export const IDLE_CONTINUATION_LIMIT = 3;
