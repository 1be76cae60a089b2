/**
 * The `run_end` a worker pushes when a run ends, built in one place for the three ways a run ends:
 * a client's prompt that ran (`ofOutcome`), one that failed or was refused (`ofError`), and a turn the
 * session started itself (`ofWokenTurn`: a sub-agent's notice woke it). Its `id` and `state` are
 * the worker's to add when it sends it (see `Worker.pushRunEnd`).
 */
import { UserError } from "../errors.js";
import { type LinkRunEnd, linkRunEnd } from "../link/index.js";
import { type RunReport, resultLine } from "../modes/run-result.js";
import type { RunOutcome } from "../orchestrator/index.js";
import type { StartedSession } from "../startup/index.js";
import type { WorkerPush } from "./protocol.js";

export type RunEndPush = Extract<WorkerPush, { type: "run_end" }>;

/** A `run_end` before the worker gives it its id and state. */
export type RunEndBody = Omit<RunEndPush, "id" | "state">;

/** The fields every `run_end` has; the optional ones are left out when empty. */
function runEnd(fields: {
	status: string;
	exitCode: number;
	message?: string;
	refused?: boolean;
	commandMessage?: string;
	result: Record<string, unknown>;
	link: LinkRunEnd;
}): RunEndBody {
	return {
		type: "run_end",
		status: fields.status,
		exitCode: fields.exitCode,
		...(fields.message ? { message: fields.message } : {}),
		...(fields.refused ? { refused: true as const } : {}),
		...(fields.commandMessage ? { commandMessage: fields.commandMessage } : {}),
		result: fields.result,
		link: fields.link,
	};
}

/** A client's prompt ran to its end (`report`: how print and JSON mode describe it). */
export function ofOutcome(started: StartedSession, outcome: RunOutcome, report: RunReport): RunEndBody {
	return runEnd({
		status: outcome.status,
		exitCode: report.exitCode,
		message: report.message,
		commandMessage: outcome.command?.message,
		result: resultLine(started, outcome, report),
		link: linkRunEnd(outcome),
	});
}

/** A client's prompt failed before it ended (a user error: refused, as print mode says with `Error: `). */
export function ofError(error: Error): RunEndBody {
	const user = error instanceof UserError ? error : undefined;
	const exitCode = user ? user.exitCode : 1;
	const message = `${error.message}${user?.hint ? `\n${user.hint}` : ""}`;
	return runEnd({
		status: "error",
		exitCode,
		message,
		refused: user !== undefined,
		result: { type: "result", status: "error", exitCode, message },
		link: { status: "error", errorMessage: message.replace("\n", " ") },
	});
}

/** A turn the session started itself ended (its description is the session's `run_end`). */
export function ofWokenTurn(end: LinkRunEnd): RunEndBody {
	const exitCode = end.status === "ok" ? 0 : end.status === "aborted" ? 130 : 1;
	const message = end.errorMessage;
	return runEnd({
		status: end.status,
		exitCode,
		message,
		commandMessage: end.commandMessage,
		result: { type: "result", status: end.status, exitCode, ...(message ? { message } : {}) },
		link: end,
	});
}
