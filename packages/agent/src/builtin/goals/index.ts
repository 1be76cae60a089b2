/**
 * `/goal` inside Prime Agent, through the public extension API: it shows, sets, pauses, resumes
 * and clears the session's goal. The goal itself (state, usage, continuations) lives in
 * `src/goals/`; startup loads this extension with the session's controller.
 */
import type { ExtensionFactory } from "../../extensions/api.js";
import { type GoalController, runGoalCommand } from "../../goals/index.js";

export const GOALS_EXTENSION_NAME = "builtin:goals";

/**
 * `startsNow`: whether work on a goal set now would start at once (the session has a conversation);
 * `later`: when it starts otherwise (see `runGoalCommand`).
 */
export function goalsExtension(goals: GoalController, startsNow: () => boolean, later?: string): ExtensionFactory {
	return (api) => {
		api.registerCommand("goal", {
			description: "show the goal; /goal <objective>, /goal pause, /goal resume, /goal clear",
			arguments: ["pause", "resume", "clear"],
			handler: (args) => runGoalCommand(args, goals, startsNow, later),
		});
	};
}
