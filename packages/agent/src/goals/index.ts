/** Goals: an objective the host keeps the model working on until it is audited and complete. */

export { runGoalCommand, STARTS_WITH_NEXT_PROMPT } from "./command.js";
export {
	type GoalCaller,
	GoalController,
	type GoalEvent,
	type GoalEventKind,
	type GoalHost,
	tokensOf,
} from "./controller.js";
export { GOAL_REQUESTS, goalHostHandlers } from "./host-handlers.js";
export { goalContinueMessage, goalStartMessage } from "./prompt.js";
export {
	budgetFrom,
	budgetReached,
	checkText,
	count,
	currentGoal,
	describeBudget,
	describeGoal,
	describeUsage,
	duration,
	emptyUsage,
	unstartedGoal,
} from "./state.js";
export {
	GOAL_CONTEXT,
	GOAL_ENTRY,
	GOAL_TEXT_LIMIT,
	type GoalBudget,
	type GoalData,
	GoalError,
	type GoalStatus,
	type GoalUsage,
	IDLE_CONTINUATION_LIMIT,
} from "./types.js";
