import type { AutonomousEvent } from "../autonomous/index.js";
import { sessionUsage } from "../children/index.js";
import type { GoalEvent } from "../goals/index.js";
import type { SessionLine } from "../link/session-events.js";
import type { RunOutcome } from "../orchestrator/index.js";
import type { StartedSession } from "../startup/index.js";
import { settleChildren } from "./children.js";
import { longRunningOutcome, onLongRunningEvents } from "./long-running.js";
import { describeOutcome, type OutcomeReport } from "./outcome.js";

export type RunReport = OutcomeReport & { autonomous?: Record<string, unknown> };

/**
 * The end of a `-p` or JSON run: wait until the root is idle, every sub-agent has settled and its
 * notice was handled (a command may have started work too: `/goal` in a session with a
 * conversation), then report how it went. A run stopped by `signal` meanwhile ended as stopped.
 */
export async function finishRun(
	started: StartedSession,
	first: RunOutcome,
	signal: AbortSignal,
	goalStop: () => GoalEvent | undefined,
): Promise<{ outcome: RunOutcome; report: RunReport }> {
	let outcome = first;
	if (outcome.status === "ok" && (!outcome.command || !started.agentSession.isIdle()))
		outcome = (await settleChildren(started, signal)) ?? outcome;
	// Stopped (Ctrl-C, a signal) while it waited: the run did not end by itself, and says so.
	if (signal.aborted && outcome.status === "ok") outcome = { ...outcome, status: "aborted" };
	return { outcome, report: longRunningOutcome(started, outcome, describeOutcome(outcome, started), goalStop()) };
}

/** The last line of `--mode json`: how the run ended. */
export function resultLine(started: StartedSession, outcome: RunOutcome, report: RunReport): Record<string, unknown> {
	return {
		type: "result",
		status: outcome.status,
		exitCode: report.exitCode,
		...(report.message ? { message: report.message } : {}),
		...(outcome.command ? { command: outcome.command } : {}),
		sessionPersisted: started.session.persisted,
		// Tokens and cost of this session's answers, of its sub-agents, and both.
		usage: sessionUsage(started.session.entries),
		// The session's goal after the run (null: none), and the autonomous run's report.
		goal: started.goals.current() ?? null,
		...(report.autonomous ? { autonomous: report.autonomous } : {}),
	};
}

/**
 * Every line `--mode json` shows between the session and the result: loop events, kernel status,
 * session notices, sub-agent progress, goal and autonomous events. Returns the unsubscribe.
 */
export function onSessionLines(
	started: StartedSession,
	line: (value: SessionLine) => void,
	onLongRunning?: (event: GoalEvent | AutonomousEvent) => void,
): () => void {
	const stops = [
		started.agentSession.subscribe(line),
		started.onKernelStatus((status) => line({ type: "kernel_status", ...status })),
		started.agentSession.onNotice(line),
		started.onChildEvent(line),
		onLongRunningEvents(started, (event) => {
			onLongRunning?.(event);
			line(event);
		}),
	];
	return () => {
		for (const stop of stops) stop();
	};
}
