import type { SessionEntry } from "../session/index.js";
import {
	GOAL_CONTEXT,
	GOAL_ENTRY,
	GOAL_TEXT_LIMIT,
	type GoalBudget,
	type GoalData,
	GoalError,
	type GoalUsage,
} from "./types.js";

const STATUSES = new Set(["active", "paused", "complete", "budget_reached", "cleared"]);

/** The goal of a branch: the newest `goal` entry (so forks and `--at` see the goal of their point). */
export function currentGoal(branch: readonly SessionEntry[]): GoalData | undefined {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index] as SessionEntry;
		if (entry.type !== "custom" || entry.customType !== GOAL_ENTRY) continue;
		const data = entry.data as Partial<GoalData> | undefined;
		if (typeof data?.id === "string" && typeof data.objective === "string" && STATUSES.has(String(data.status)))
			return data as GoalData;
	}
	return undefined;
}

/**
 * The branch's active goal when work on it never started: no goal message entered the conversation
 * since the change that made it active (set or resumed). A goal the user set with a one-shot
 * `-p "/goal ..."` is one: its start message was to go with a next prompt that process never had,
 * so the session's next run sends it.
 */
export function unstartedGoal(branch: readonly SessionEntry[]): GoalData | undefined {
	let goal: GoalData | undefined;
	let started = false;
	for (const entry of branch) {
		if (entry.type === "custom_message" && entry.customType === GOAL_CONTEXT) started = true;
		if (entry.type !== "custom" || entry.customType !== GOAL_ENTRY) continue;
		const next = currentGoal([entry]);
		if (!next) continue;
		// An entry that only saves usage leaves the goal as it was; a set or a resume starts it anew.
		if (next.status === "active" && (goal?.status !== "active" || goal.id !== next.id)) started = false;
		goal = next;
	}
	return goal?.status === "active" && !started ? goal : undefined;
}

export function emptyUsage(): GoalUsage {
	return { tokens: 0, turns: 0, timeMs: 0 };
}

/** Which budget a goal has used up, as a sentence, or undefined while it has room. */
export function budgetReached(budget: GoalBudget | undefined, used: GoalUsage): string | undefined {
	if (!budget) return undefined;
	if (budget.tokens !== undefined && used.tokens >= budget.tokens)
		return `token budget reached: ${count(used.tokens)} of ${count(budget.tokens)} tokens (input + output) used`;
	if (budget.turns !== undefined && used.turns >= budget.turns)
		return `turn budget reached: ${count(used.turns)} of ${count(budget.turns)} turns used`;
	if (budget.timeMs !== undefined && used.timeMs >= budget.timeMs)
		return `time budget reached: ${duration(used.timeMs)} of ${duration(budget.timeMs)} used`;
	return undefined;
}

/** Check an objective or summary: a non-empty string within the limit. */
export function checkText(value: unknown, what: string): string {
	if (typeof value !== "string" || value.trim() === "") throw new GoalError(`${what} must be a non-empty string.`);
	if (value.length > GOAL_TEXT_LIMIT)
		throw new GoalError(`${what} is ${value.length} characters; at most ${GOAL_TEXT_LIMIT} are accepted.`);
	return value.trim();
}

/**
 * A budget from `{tokens, turns, minutes}` (each optional, a positive number); `what` names the
 * caller ("/goal: turns must be ..."), or `label` names each value ("--goal-turns must be ...").
 */
export function budgetFrom(
	values: { tokens?: unknown; turns?: unknown; minutes?: unknown },
	what: string,
	label: (name: string) => string = (name) => `${what}: ${name}`,
): GoalBudget {
	const budget: GoalBudget = {};
	const positive = (value: unknown, name: string, integer: boolean): number | undefined => {
		if (value === undefined || value === null) return undefined;
		const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
		if (typeof number !== "number" || !Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number)))
			throw new GoalError(
				`${label(name)} must be a positive ${integer ? "whole " : ""}number, not ${JSON.stringify(value)}.`,
			);
		return number;
	};
	const tokens = positive(values.tokens, "tokens", true);
	const turns = positive(values.turns, "turns", true);
	const minutes = positive(values.minutes, "minutes", false);
	if (tokens !== undefined) budget.tokens = tokens;
	if (turns !== undefined) budget.turns = turns;
	if (minutes !== undefined) budget.timeMs = Math.round(minutes * 60_000);
	return budget;
}

export function isEmptyBudget(budget: GoalBudget | undefined): boolean {
	return !budget || (budget.tokens === undefined && budget.turns === undefined && budget.timeMs === undefined);
}

/** "50,000 tokens, 20 turns, 30m 0s", or "no budget". */
export function describeBudget(budget: GoalBudget | undefined): string {
	if (isEmptyBudget(budget)) return "no budget";
	const parts: string[] = [];
	if (budget?.tokens !== undefined) parts.push(`${count(budget.tokens)} tokens`);
	if (budget?.turns !== undefined) parts.push(`${count(budget.turns)} turns`);
	if (budget?.timeMs !== undefined) parts.push(duration(budget.timeMs));
	return parts.join(", ");
}

export function describeUsage(used: GoalUsage): string {
	return `${count(used.turns)} turn${used.turns === 1 ? "" : "s"}, ${count(used.tokens)} tokens, ${duration(used.timeMs)}`;
}

/** The goal as the user reads it (`/goal`, print mode). */
export function describeGoal(goal: GoalData | undefined): string {
	if (!goal || goal.status === "cleared")
		return "No goal. Set one with /goal <objective> (options: --tokens N, --turns N, --minutes N).";
	const lines = [`Goal ${goal.id} (${goal.status.replace("_", " ")}): ${goal.objective}`];
	lines.push(`  used: ${describeUsage(goal.used ?? emptyUsage())}; budget: ${describeBudget(goal.budget)}`);
	if (goal.reason) lines.push(`  ${goal.reason}`);
	if (goal.summary) lines.push(`  summary: ${goal.summary}`);
	return lines.join("\n");
}

export function count(value: number): string {
	return value.toLocaleString("en-US");
}

/** "45s", "3m 05s", "1h 02m". */
export function duration(ms: number): string {
	const seconds = Math.round(ms / 1000);
	if (seconds < 60) return `${seconds}s`;
	const minutes = Math.floor(seconds / 60);
	if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
	return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}
