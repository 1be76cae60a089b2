/**
 * The lines of goal and autonomous events, apart from the modes that run them: a view of a
 * session (the terminal UI) shows them without loading the session's code.
 */
import type { AutonomousEvent } from "../autonomous/index.js";
import type { GoalEvent } from "../goals/index.js";
import { describeUsage, duration, emptyUsage } from "../goals/state.js";

/** One line for a goal event (print and chat modes, stderr). */
export function describeGoalEvent(event: GoalEvent): string {
	const { goal } = event;
	const used = describeUsage(goal.used ?? emptyUsage());
	switch (event.event) {
		case "set":
			return `Goal ${goal.id} set: ${oneLine(goal.objective)}`;
		case "resumed":
			return `Goal ${goal.id} resumed`;
		case "paused":
			return `Goal ${goal.id} paused`;
		case "cleared":
			return `Goal ${goal.id} cleared`;
		case "complete":
			return `Goal ${goal.id} complete (${used}): ${oneLine(goal.summary ?? "")}`;
		case "budget_reached":
			return `Goal ${goal.id} stopped, not complete: ${goal.reason}`;
		case "stuck":
			return `Goal ${goal.id} ${goal.reason}`;
		case "continued":
			return `Goal ${goal.id} is still open: continuing with the audit prompt (${used})`;
		case "held":
			return `Goal ${goal.id} is still open: continuing once the sub-agents have settled`;
	}
}

/** One line for an autonomous event (print and chat modes, stderr). */
export function describeAutonomousEvent(event: AutonomousEvent): string | undefined {
	switch (event.type) {
		case "autonomous_gate": {
			const { gate } = event;
			const which = `Gate ${gate.index + 1}/${event.of} \`${gate.command}\``;
			if (gate.status === "passed") return `${which} passed (${duration(gate.durationMs)})`;
			if (gate.status === "not_rerun") return `${which} not rerun: the workspace has not changed since it failed`;
			if (gate.stopped) return `${which} stopped by the time limit (${duration(gate.durationMs)})`;
			if (gate.cannotRun) return `${which} cannot run (exit ${gate.exitCode ?? "none"}, ${duration(gate.durationMs)})`;
			return `${which} failed (${gate.timedOut ? "timed out" : `exit ${gate.exitCode ?? "none"}`}, ${duration(gate.durationMs)})`;
		}
		case "autonomous_continue":
			return `Autonomous: continuation ${event.continuation} of ${event.of} (${event.reason === "gate" ? "a gate failed" : "the goal is open"})`;
		case "autonomous_end":
			return undefined;
	}
}

export function oneLine(text: string): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}
