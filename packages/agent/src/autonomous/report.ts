import { count, duration } from "../goals/index.js";
import type { GateOutput } from "./archive.js";
import type { GateRun } from "./gates.js";

/** What stopped an autonomous run that did not pass its gates. */
export type LimitName = "continuations" | "turns" | "tokens" | "time" | "goal";

/** Told to the model, word for word, instead of rerunning a failed gate on an unchanged workspace. */
export const GATE_NOT_RERUN_TEXT =
	"The autonomous gate was not rerun because the workspace has not changed since this failure. Edit source files, tests, or a blocker artifact before attempting to finish again.";

function how(run: GateRun): string {
	if (run.error) return `could not start (${run.error})`;
	if (run.timedOut) return `was stopped after ${duration(run.durationMs)} (the gate timeout)`;
	return `exited with status ${run.exitCode ?? "none (killed)"} after ${duration(run.durationMs)}`;
}

/** The hidden message a failing gate continues the run with. */
export function gateFailedText(index: number, of: number, run: GateRun, output: GateOutput, left: number): string {
	return [
		`[autonomous gate ${index + 1} of ${of} failed] \`${run.command}\` ${how(run)}. The run goes on so you can fix the cause (${left - 1} more continuation${left - 1 === 1 ? "" : "s"} after this one); every gate runs again, in order, when you stop.`,
		"Output:",
		output.text,
	].join("\n");
}

/** The hidden message when a failed gate is not rerun because nothing changed. */
export function gateNotRerunText(index: number, of: number, run: GateRun, output: GateOutput): string {
	const where = output.observationId ? `; its output is Prime Context observation ${output.observationId}` : "";
	return [
		`[autonomous gate ${index + 1} of ${of} not rerun] \`${run.command}\``,
		GATE_NOT_RERUN_TEXT,
		`(Its last run ${how(run)}${where}.)`,
	].join("\n");
}

const LIMIT_WORDS: Record<LimitName, { what: string; raise: string }> = {
	continuations: {
		what: "the continuation limit was reached",
		raise: '--max-continuations N (or "autonomous": {"maxContinuations": N} in settings.json)',
	},
	turns: {
		what: "the turn limit was reached",
		raise: '--max-turns N (or "autonomous": {"maxTurns": N} in settings.json)',
	},
	tokens: {
		what: "the token limit was reached",
		raise: '--max-tokens N (or "autonomous": {"maxTokens": N} in settings.json)',
	},
	time: {
		what: "the time limit was reached",
		raise: '--max-minutes N (or "autonomous": {"maxMinutes": N} in settings.json)',
	},
	goal: { what: "the goal stopped", raise: "/goal resume with a larger budget (--tokens, --turns, --minutes)" },
};

export interface ReportFacts {
	gates: readonly string[];
	results: readonly (
		| {
				status: string;
				exitCode: number | null;
				timedOut?: boolean;
				stopped?: boolean;
				durationMs: number;
				observationId?: string;
		  }
		| undefined
	)[];
	end: { status: "passed" } | { status: "limit"; limit: LimitName; detail: string } | undefined;
	continuations: number;
	turns: number;
	tokens: number;
	elapsedMs: number;
	sessionId: string;
}

/** The run's closing report: the gates passed, or which limit stopped it (a limit is never success). */
export function autonomousReport(facts: ReportFacts): string {
	const usage = `${facts.continuations} continuation${facts.continuations === 1 ? "" : "s"}, ${count(facts.turns)} turn${facts.turns === 1 ? "" : "s"}, ${count(facts.tokens)} tokens, ${duration(facts.elapsedMs)}`;
	const lines: string[] = [];
	const { end } = facts;
	if (end?.status === "passed") {
		lines.push(
			facts.gates.length === 0
				? `Autonomous run finished: no gates are configured, so the run ended when the model stopped (${usage}).`
				: `Autonomous run passed: every gate passed (${facts.gates.length} of ${facts.gates.length}; ${usage}).`,
		);
	} else if (end?.status === "limit") {
		const words = LIMIT_WORDS[end.limit];
		lines.push(
			`Autonomous run stopped: ${words.what} (${end.detail}). A limit is not success: the gates have not all passed (${usage}).`,
		);
	}
	facts.gates.forEach((command, index) => {
		const result = facts.results[index];
		if (!result) {
			lines.push(`  not run   ${command}`);
			return;
		}
		const status = result.status === "not_rerun" ? "not rerun" : result.status;
		const detail =
			result.status === "passed"
				? duration(result.durationMs)
				: result.stopped
					? `stopped by the time limit after ${duration(result.durationMs)}`
					: `${result.timedOut ? `timed out${result.durationMs > 0 ? ` after ${duration(result.durationMs)}` : ""}` : `exit ${result.exitCode ?? "none"}`}${result.observationId ? `, output ${result.observationId}` : ""}`;
		lines.push(`  ${status.padEnd(9)} ${command} (${detail})`);
	});
	if (end?.status === "limit") {
		lines.push(
			`Go on with \`prime-agent --autonomous --resume ${facts.sessionId} -p "..."\`, or raise the limit: ${LIMIT_WORDS[end.limit].raise}.`,
		);
	}
	return lines.join("\n");
}
