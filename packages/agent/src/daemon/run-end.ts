/**
 * The `run_end` a worker pushes when a run ends, for the three ways a run ends: a client's prompt
 * that ran (`ofOutcome`), one that failed or was refused (`ofError`), and a turn the session started
 * itself (`ofWokenTurn`: a sub-agent's notice woke it). What each says is described once for every
 * view in `modes/run-end.ts`; its `id` and `state` are the worker's to add when it sends it (see
 * `Worker.pushRunEnd`).
 */
import type { LinkRunEnd } from "../link/index.js";
import { describeRefusedRun, describeRunEnd, runEndMessage } from "../modes/run-end.js";
import type { RunReport } from "../modes/run-result.js";
import type { RunOutcome } from "../orchestrator/index.js";
import type { StartedSession } from "../startup/index.js";
import type { WorkerPush } from "./protocol.js";

export type RunEndPush = Extract<WorkerPush, { type: "run_end" }>;

/** A `run_end` before the worker gives it its id and state. */
export type RunEndBody = Omit<RunEndPush, "id" | "state">;

/** A client's prompt ran to its end (`report`: how print and JSON mode describe it). */
export function ofOutcome(started: StartedSession, outcome: RunOutcome, report: RunReport): RunEndBody {
	return { type: "run_end", ...runEndMessage(describeRunEnd(started, outcome, report)) };
}

/** A client's prompt failed before it ran (a user error: refused, as print mode says with `Error: `). */
export function ofError(error: unknown): RunEndBody {
	return { type: "run_end", ...runEndMessage(describeRefusedRun(error)) };
}

/** A turn the session started itself ended (its description is the session's `run_end`). */
export function ofWokenTurn(end: LinkRunEnd): RunEndBody {
	return { type: "run_end", ...runEndMessage(end) };
}
