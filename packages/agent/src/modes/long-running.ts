import { type AutonomousEvent, autonomousReport } from "../autonomous/index.js";
import { ExitCode } from "../errors.js";
import { describeUsage, emptyUsage, type GoalEvent, type GoalStatus } from "../goals/index.js";
import type { RunOutcome } from "../orchestrator/index.js";
import type { StartedSession } from "../startup/index.js";
import { oneLine } from "./long-running-lines.js";
import { describeOutcome, type OutcomeReport } from "./outcome.js";

export { describeAutonomousEvent, describeGoalEvent } from "./long-running-lines.js";

const OPEN_STATES: Partial<Record<GoalStatus, string>> = {
	active: "is active",
	paused: "is paused",
	budget_reached: "stopped at its budget",
};

/** The line for an open goal when a mode starts (`--goal`, a resumed session); none for a closed one. */
export function describeActiveGoal(started: StartedSession): string | undefined {
	const goal = started.goals.current();
	const state = goal && OPEN_STATES[goal.status];
	return (
		goal &&
		state &&
		`Goal ${goal.id} ${state}: ${oneLine(goal.objective)} (${describeUsage(goal.used ?? emptyUsage())})`
	);
}

/** The event when it stopped a goal short of completion (its budget, no progress). */
export function goalStopOf(event: GoalEvent | AutonomousEvent): GoalEvent | undefined {
	return event.type === "goal" && (event.event === "budget_reached" || event.event === "stuck") ? event : undefined;
}

/** Listen to goal and autonomous events of a session; returns the unsubscribe. */
export function onLongRunningEvents(
	started: StartedSession,
	listener: (event: GoalEvent | AutonomousEvent) => void,
): () => void {
	const stops = [started.goals.onEvent(listener)];
	if (started.autonomous) stops.push(started.autonomous.onEvent(listener));
	return () => {
		for (const stop of stops) stop();
	};
}

/**
 * The end of a `-p` or JSON run with goals or autonomous mode: an autonomous run's report (exit 0
 * when the gates passed, `limitReached` when a limit stopped it, `usage` when a gate could not run
 * its command: a configuration error), or a goal stopped by its budget
 * during the run (`limitReached`, also when a command such as `/goal resume` started that work). A model
 * error or Ctrl-C keeps its own report.
 */
export function longRunningOutcome(
	started: StartedSession,
	outcome: RunOutcome,
	report: OutcomeReport,
	goalStop: GoalEvent | undefined,
): OutcomeReport & { autonomous?: Record<string, unknown> } {
	const run = started.autonomous;
	if (!run) {
		// A command that started work (`-p "/goal resume --turns N"`) ends as its work ended.
		if (!goalStop || report.exitCode !== ExitCode.ok) return report;
		return {
			exitCode: ExitCode.limitReached,
			message:
				goalStop.event === "budget_reached"
					? `Goal ${goalStop.goal.id} is not complete: its ${goalStop.goal.reason}. Go on with a larger budget: \`prime-agent --resume ${started.session.id} -p "/goal resume --tokens N --turns N --minutes N"\`.`
					: `Goal ${goalStop.goal.id} is not complete: it was ${goalStop.goal.reason}`,
		};
	}
	const ending = run.ending;
	if (ending?.status !== "limit" && outcome.status !== "aborted" && run.interrupted)
		// Ctrl-C while the gates ran: the model's turn ended well, the run did not.
		return describeOutcome({ ...outcome, status: "aborted" }, started);
	const userStopped = outcome.status === "aborted" && ending?.status !== "limit";
	// A model error, Ctrl-C, or a command that ran no model (`-p "/pc status"`) keeps its own report.
	if (userStopped || (!ending && (outcome.status === "error" || outcome.command))) return report;
	const text = autonomousReport({
		gates: run.config.gates,
		results: run.gates,
		end: ending,
		gatesFrom: run.config.gatesFrom,
		continuations: run.continuations,
		turns: run.turns,
		tokens: run.tokens,
		elapsedMs: run.elapsedMs,
		sessionId: started.session.id,
	});
	const data = {
		status: ending?.status ?? "unfinished",
		...(ending?.status === "limit" ? { limit: ending.limit } : {}),
		...(ending?.status === "gate_error" ? { gate: ending.gate, detail: ending.detail } : {}),
		gates: run.config.gates.map((command, index) => run.gates[index] ?? { index, command, status: "not_run" }),
		continuations: run.continuations,
		turns: run.turns,
		tokens: run.tokens,
		elapsedMs: run.elapsedMs,
		limits: run.config.limits,
		report: text,
	};
	if (ending?.status === "passed") return { exitCode: ExitCode.ok, message: text, autonomous: data };
	if (ending?.status === "limit") return { exitCode: ExitCode.limitReached, message: text, autonomous: data };
	if (ending?.status === "gate_error") return { exitCode: ExitCode.usage, message: text, autonomous: data };
	return {
		exitCode: ExitCode.modelError,
		message: `The autonomous run ended before its gates were checked.${text ? `\n${text}` : ""}`,
		autonomous: data,
	};
}
