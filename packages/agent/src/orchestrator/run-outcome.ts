import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { DiskWriteError } from "../home/index.js";

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
