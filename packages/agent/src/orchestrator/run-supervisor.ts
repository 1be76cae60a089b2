import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { HiddenMessage } from "../extensions/index.js";

/** What the model's last answer was when it would stop (no tool calls, nothing queued). */
export interface WouldStopEvent {
	message: AssistantMessage | undefined;
	/** Aborted when the run is stopped (Ctrl-C, shutdown, a time limit): stop long work then. */
	signal: AbortSignal;
}

/**
 * What happens when the model would stop: `continueWith` goes on with that hidden message (a
 * follow-up in the same run); `hold` lets the run end now and asks again once sub-agents have
 * settled (`AgentSession.resumeHeld`); undefined lets it stop.
 */
export type StopVerdict = { continueWith: HiddenMessage } | { hold: true } | undefined;

/**
 * Goals and autonomous mode: what keeps a run going. Contract: `onWouldStop` must not throw (a
 * throw is reported and treated as "stop"); `shouldEndRun` is checked after every tool result and
 * must be cheap; true ends the run once the current turn's tools are done, with no further model call.
 */
export interface RunSupervisor {
	onWouldStop(event: WouldStopEvent): Promise<StopVerdict> | StopVerdict;
	shouldEndRun?(): boolean;
}

/** The answer ended the turn without tool calls, as a finished (or cut-off) answer. */
export function wouldStop(message: AssistantMessage): boolean {
	if (message.stopReason !== "stop" && message.stopReason !== "length") return false;
	return !message.content.some((part) => part.type === "toolCall");
}
