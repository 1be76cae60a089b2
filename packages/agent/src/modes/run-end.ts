/**
 * How a run ended, described once for every view: the exit code and message `-p` ends with, the
 * `result` line of `--mode json`, and what a `SessionLink` view shows. A prompt's run, a woken
 * turn and a schedule's are described alike, in process and in a daemon worker.
 */
import { ExitCode, UserError } from "../errors.js";
import type { LinkRunEnd } from "../link/session-events.js";
import type { RunOutcome } from "../orchestrator/index.js";
import type { StartedSession } from "../startup/index.js";
import { longRunningOutcome } from "./long-running.js";
import { describeOutcome } from "./outcome.js";
import { type RunReport, resultLine } from "./run-result.js";

/**
 * The report of a run that ended by itself (a woken turn, a schedule, a queued prompt): nothing
 * waited for its sub-agents, and no goal event of the run is known.
 */
export function runReport(started: StartedSession, outcome: RunOutcome): RunReport {
	return longRunningOutcome(started, outcome, describeOutcome(outcome, started), undefined);
}

/**
 * How a run ended, from its outcome and `report` (`finishRun`'s, for a run that waited for its
 * sub-agents): an error of its own only when no answer shows it.
 */
export function describeRunEnd(
	started: StartedSession,
	outcome: RunOutcome,
	report: RunReport = runReport(started, outcome),
): LinkRunEnd & { result: Record<string, unknown> } {
	return {
		status: outcome.status,
		exitCode: report.exitCode,
		...(report.message ? { message: report.message } : {}),
		...(outcome.command?.message ? { commandMessage: outcome.command.message } : {}),
		// A failed answer shows its own error; a run that failed elsewhere (no answer, no kernel) says why here.
		...(outcome.status === "error" && (!outcome.lastAssistant || outcome.kernelFailed) && !outcome.command?.message
			? { errorMessage: outcome.errorMessage ?? "The run failed." }
			: {}),
		result: resultLine(started, outcome, report),
	};
}

/** The end of a run that never started: `agentSession.prompt` threw (a user error says what to fix). */
export function describeRefusedRun(error: unknown): LinkRunEnd & { result: Record<string, unknown> } {
	const refused = error instanceof UserError;
	const exitCode = refused ? error.exitCode : ExitCode.modelError;
	const message = `${(error as Error).message}${refused && error.hint ? `\n${error.hint}` : ""}`;
	return {
		status: "error",
		exitCode,
		message,
		...(refused ? { refused: true as const } : {}),
		errorMessage: message.replace("\n", " "),
		result: { type: "result", status: "error", exitCode, message },
	};
}
