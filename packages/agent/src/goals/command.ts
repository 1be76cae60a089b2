import type { GoalController } from "./controller.js";
import { budgetFrom, describeBudget, describeGoal } from "./state.js";
import { GoalError } from "./types.js";

const BUDGET_FLAGS = new Set(["--tokens", "--turns", "--minutes"]);

/** Leading `--tokens N --turns N --minutes N`, and the text after them. */
function splitOptions(args: string): { options: Record<string, string>; rest: string } {
	const options: Record<string, string> = {};
	let rest = args.trim();
	for (;;) {
		const match = /^(--[a-z]+)(?:=|\s+)(\S+)\s*/.exec(rest);
		if (!match || !BUDGET_FLAGS.has(match[1] as string)) break;
		options[(match[1] as string).slice(2)] = match[2] as string;
		rest = rest.slice(match[0].length);
	}
	if (/^--\S+/.test(rest)) {
		throw new GoalError(
			`unknown option ${rest.split(/\s/)[0]}; the options are --tokens N, --turns N and --minutes N, before the objective.`,
		);
	}
	return { options, rest: rest.trim() };
}

/** What a set or resumed goal says when its work waits for a prompt, in a session that takes more prompts. */
export const STARTS_WITH_NEXT_PROMPT = "Work on it starts with your next prompt.";

/**
 * `/goal` shows the goal; `/goal pause`, `/goal resume [budget]`, `/goal clear`; anything else sets
 * a goal: `/goal [--tokens N] [--turns N] [--minutes N] <objective>`. Returns the answer for the user.
 * `startsNow`: work on a goal set now starts at once; else `later` says when it starts.
 */
export function runGoalCommand(
	args: string,
	goals: GoalController,
	startsNow: () => boolean,
	later = STARTS_WITH_NEXT_PROMPT,
): string {
	const text = args.trim();
	if (text === "") return describeGoal(goals.current());
	if (text === "pause") {
		const goal = goals.pause();
		return `Goal ${goal.id} paused; the host no longer continues it. /goal resume picks it up again.`;
	}
	if (text === "clear") {
		const goal = goals.clear();
		return `Goal ${goal.id} cleared.`;
	}
	// `resume` alone or with budget options; "resume the nightly job" is an objective.
	if (/^resume(\s+--|\s*$)/.test(text)) {
		const { options, rest } = splitOptions(text.slice("resume".length));
		if (rest !== "")
			throw new GoalError(`unexpected "${rest}" after /goal resume; only --tokens, --turns and --minutes go there.`);
		const now = startsNow();
		const goal = goals.resume(budgetFrom(options, "/goal resume"));
		return `Goal ${goal.id} resumed (budget: ${describeBudget(goal.budget)}). ${now ? "Working on it now." : later}`;
	}
	const parsed = splitOptions(text);
	if (parsed.rest === "")
		throw new GoalError("the objective is missing: /goal [--tokens N] [--turns N] [--minutes N] <objective>.");
	const previous = goals.current();
	const now = startsNow();
	const goal = goals.create(parsed.rest, budgetFrom(parsed.options, "/goal"), "user");
	const replaced =
		previous && (previous.status === "active" || previous.status === "paused")
			? ` It replaces goal ${previous.id}.`
			: "";
	return `Goal ${goal.id} set (budget: ${describeBudget(goal.budget)}).${replaced} ${now ? "Working on it now." : later}`;
}
