import type { ChildEvent } from "../children/index.js";
import type { RunOutcome } from "../orchestrator/index.js";
import type { StartedSession } from "../startup/index.js";

/** One progress line for a sub-agent event (print mode, stderr). */
export function describeChildEvent(event: ChildEvent): string {
	switch (event.type) {
		case "child_spawned":
			return `Sub-agent "${event.name}" (${event.rlm_child_id}) started on ${event.model}`;
		case "child_finished":
			return `Sub-agent "${event.name}" ${event.status === "idle" ? "finished" : event.status}${event.replied ? " (it replied)" : ""}`;
		case "child_notice":
			return `Sub-agent "${event.name}": ${event.kind} notice sent to its parent`;
		case "child_residency":
			return event.residency === "passive"
				? `Sub-agent "${event.name}" left memory after being idle (its session and kernel variables are saved)`
				: `Sub-agent "${event.name}" is back in memory for a message`;
	}
}

/**
 * After the prompt's own run: wait until the session is idle, every sub-agent has settled and the
 * turns their notices and messages started have ended (stopped early by `signal`). Returns the
 * worst outcome of those turns, if one failed or was aborted.
 */
export async function settleChildren(started: StartedSession, signal: AbortSignal): Promise<RunOutcome | undefined> {
	let worst: RunOutcome | undefined;
	const stop = started.agentSession.onWakeOutcome((outcome) => {
		if (outcome.status !== "ok" && worst?.status !== "aborted") worst = outcome;
	});
	try {
		await started.whenSettled(signal);
	} finally {
		stop();
	}
	return worst;
}
