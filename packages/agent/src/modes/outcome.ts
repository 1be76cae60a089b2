import { isContextOverflow } from "@mariozechner/pi-ai";
import { ExitCode, type ExitCodeValue } from "../errors.js";
import type { RunOutcome } from "../orchestrator/index.js";
import { describeOutputRefusal, parseOutputRefusal } from "../providers/output-refusal.js";
import type { StartedSession } from "../startup/index.js";
import { describeModelFailure } from "./model-failure.js";

export interface OutcomeReport {
	exitCode: ExitCodeValue;
	/** What happened and what to do, for the user; absent when the run succeeded. */
	message?: string;
}

/** Turn how a run ended into an exit code and a message that says what to do next. */
export function describeOutcome(outcome: RunOutcome, started: StartedSession): OutcomeReport {
	const resume = started.session.persisted
		? ` The session is saved: resume it with \`prime-agent --resume ${started.session.id}\`.`
		: " Nothing was saved (no answer had arrived yet): run the request again.";
	if (outcome.command && outcome.status === "error") {
		const exitCode = outcome.command.unknown ? ExitCode.usage : ExitCode.modelError;
		return { exitCode, message: outcome.command.message ?? outcome.errorMessage };
	}
	// Our own write failed (a full disk): the model is not to blame, and the hint says how to go on.
	if (outcome.writeFailure) {
		return { exitCode: ExitCode.disk, message: `${outcome.writeFailure.message} ${outcome.writeFailure.hint}` };
	}
	if (outcome.kernelFailed) {
		return {
			exitCode: ExitCode.kernel,
			message: `The Python kernel could not start, so the run stopped: ${outcome.errorMessage}${resume}`,
		};
	}
	if (outcome.status === "aborted") {
		return { exitCode: ExitCode.interrupted, message: `Interrupted.${resume}` };
	}
	// The size of the answer asked for was refused, not the conversation: compacting did not run, and would not help.
	const refusal = outcome.status === "error" ? parseOutputRefusal(outcome.lastAssistant?.errorMessage) : undefined;
	if (refusal) {
		return { exitCode: ExitCode.modelError, message: `${describeOutputRefusal(started.model, refusal)}${resume}` };
	}
	if (
		outcome.status === "error" &&
		outcome.lastAssistant &&
		isContextOverflow(outcome.lastAssistant, started.model.contextWindow)
	) {
		return {
			exitCode: ExitCode.modelError,
			message: `The conversation no longer fits the context window of ${started.model.provider}/${started.model.id} (${started.model.contextWindow.toLocaleString("en-US")} tokens), even after compacting it. Start a new session, or continue from an earlier point with \`prime-agent --fork ${started.session.commandRef} --at <entry>\` (\`prime-agent sessions ${started.session.commandRef}\` lists the entries).`,
		};
	}
	if (outcome.status === "error") {
		return {
			exitCode: ExitCode.modelError,
			message: `${describeModelFailure(started.model, outcome.errorMessage)}${resume}`,
		};
	}
	return { exitCode: ExitCode.ok };
}

export { describeModelFailure } from "./model-failure.js";
