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

/** What the shell's statuses for a command it could not run mean. */
const CANNOT_RUN_WORDS: Record<number, string> = { 126: "found but not executable", 127: "not found" };
/** A line of the shell's (or an interpreter's) own words for why a command could not run. */
const CANNOT_RUN_LINE = /not found|no such file|permission denied|cannot execute|not executable/i;

/**
 * How a gate that could not run ended, with the shell's words for it: `exited with status 127 (not
 * found): "sh: 1: pytset: not found"`, or `could not start (spawn sh ENOENT)`.
 */
export function cannotRunText(run: GateRun): string {
	if (run.error) return `could not start (${run.error})`;
	const lines = run.tail
		.split("\n")
		.map((line) => line.trim())
		.filter(Boolean);
	const said = lines.findLast((line) => CANNOT_RUN_LINE.test(line)) ?? lines.at(-1);
	const code = run.exitCode ?? 0;
	const words = CANNOT_RUN_WORDS[code];
	const quoted = said ? `: ${JSON.stringify(said.length > 200 ? `${said.slice(0, 199)}…` : said)}` : "";
	return `exited with status ${code}${words ? ` (${words})` : ""}${quoted}`;
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
				cannotRun?: boolean;
				stopped?: boolean;
				durationMs: number;
				observationId?: string;
		  }
		| undefined
	)[];
	end:
		| { status: "passed" }
		| { status: "limit"; limit: LimitName; detail: string }
		| { status: "gate_error"; gate: number; detail: string }
		| undefined;
	/** Where the gates were set (`AutonomousConfig.gatesFrom`), for the fix of one that cannot run. */
	gatesFrom: string;
	continuations: number;
	turns: number;
	tokens: number;
	elapsedMs: number;
	sessionId: string;
}

/**
 * The run's closing report: the gates passed, which limit stopped it (a limit is never success),
 * or which gate could not run and where to fix its command.
 */
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
	} else if (end?.status === "gate_error") {
		lines.push(
			`Autonomous run stopped: gate ${end.gate + 1} of ${facts.gates.length} cannot run, a configuration error the model cannot fix: \`${facts.gates[end.gate]}\` ${end.detail} (${usage}).`,
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
					: result.cannotRun
						? `cannot run, exit ${result.exitCode ?? "none"}`
						: `${result.timedOut ? `timed out${result.durationMs > 0 ? ` after ${duration(result.durationMs)}` : ""}` : `exit ${result.exitCode ?? "none"}`}${result.observationId ? `, output ${result.observationId}` : ""}`;
		lines.push(`  ${status.padEnd(9)} ${command} (${detail})`);
	});
	if (end?.status === "gate_error") {
		lines.push(
			`Fix the gate's command in ${facts.gatesFrom} (the command and its interpreter must be installed, on PATH and executable: try it in a shell in the project folder), then go on with \`prime-agent --autonomous --resume ${facts.sessionId} -p "..."\`.`,
		);
	}
	if (end?.status === "limit") {
		lines.push(
			`Go on with \`prime-agent --autonomous --resume ${facts.sessionId} -p "..."\`, or raise the limit: ${LIMIT_WORDS[end.limit].raise}.`,
		);
	}
	return lines.join("\n");
}
