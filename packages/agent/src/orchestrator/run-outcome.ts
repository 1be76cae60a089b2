import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { DiskWriteError } from "../home/index.js";
import { EMPTY_ANSWER, isEmptyAnswer } from "./empty-answer.js";

/** How one prompt ended. */
export interface RunOutcome {
	status: "ok" | "error" | "aborted";
	/** The provider's or loop's message when `status` is `error`. */
	errorMessage?: string;
	/** The last assistant message of the run, if any. */
	lastAssistant?: AssistantMessage;
	/** The run stopped because the disk refused to record it in the session file (not the model's fault). */
	writeFailure?: DiskWriteError;
	/**
	 * Set when the prompt was a slash command (no model call unless the command made one);
	 * `unknown`: no command has that name.
	 */
	command?: { name: string; message?: string; unknown?: boolean };
	/** The kernel could not start (its environment is broken): the run stopped; `errorMessage` says why. */
	kernelFailed?: boolean;
}

/** What stopped a run besides its messages. `emptyFails`: a run whose every answer is empty failed. */
export interface RunFailures {
	writeFailure?: DiskWriteError;
	kernelFailure?: string;
	/** The loop's own error message, if it ended with one. */
	loopError?: string;
	emptyFails: boolean;
}

/** How a run ended, from the messages it added and what stopped it (a refused write first). */
export function runOutcome(added: readonly AgentMessage[], failures: RunFailures): RunOutcome {
	const lastAssistant = [...added].reverse().find((message) => message.role === "assistant") as
		| AssistantMessage
		| undefined;
	const { writeFailure, kernelFailure, loopError } = failures;
	if (writeFailure) return { status: "error", errorMessage: writeFailure.message, writeFailure, lastAssistant };
	if (lastAssistant?.stopReason === "aborted") return { status: "aborted", lastAssistant };
	if (kernelFailure) return { status: "error", errorMessage: kernelFailure, kernelFailed: true, lastAssistant };
	if (lastAssistant?.stopReason === "error" || loopError)
		return { status: "error", errorMessage: lastAssistant?.errorMessage ?? loopError, lastAssistant };
	const answers = added.filter((message) => message.role === "assistant") as AssistantMessage[];
	if (failures.emptyFails && answers.length > 0 && answers.every(isEmptyAnswer))
		return { status: "error", errorMessage: EMPTY_ANSWER, lastAssistant };
	return { status: "ok", lastAssistant };
}
