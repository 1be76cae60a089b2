import type { HostRequestHandler } from "prime-agent-kernel";
import type { GoalController } from "./controller.js";
import { budgetFrom } from "./state.js";
import { GoalError } from "./types.js";

/** Host request types of the kernel's `goal` module. */
export const GOAL_REQUESTS = {
	get: "goal.get",
	create: "goal.create",
	complete: "goal.complete",
} as const;

const CREATE_OPTIONS = new Set(["tokens", "turns", "minutes"]);

/** The handlers answering `goal.get()`, `goal.create(...)` and `await goal.complete(summary)`. */
export function goalHostHandlers(goals: GoalController): Record<string, HostRequestHandler> {
	return {
		[GOAL_REQUESTS.get]: () => ({ goal: goals.current() ?? null }),
		[GOAL_REQUESTS.create]: (payload) => {
			const options = (payload.options ?? {}) as Record<string, unknown>;
			const unknown = Object.keys(options).filter((key) => !CREATE_OPTIONS.has(key));
			if (unknown.length > 0) {
				throw new GoalError(
					`goal.create(): unknown option ${unknown.map((key) => JSON.stringify(key)).join(", ")}; the options are tokens, turns and minutes.`,
				);
			}
			return { goal: goals.create(payload.objective, budgetFrom(options, "goal.create()"), "model") };
		},
		[GOAL_REQUESTS.complete]: (payload) => ({ goal: goals.complete(payload.summary) }),
	};
}
