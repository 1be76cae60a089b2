/**
 * Outcome parsing for Prime Context: recognises test runs, builds, lints and commands from
 * result-shaped lines, streaming and in bounded memory.
 */
import type { Outcome } from "../types.js";

export interface OutcomeHints {
	tool?: string;
	command?: string;
	exitCode?: number | null;
	isError?: boolean;
}

export interface OutcomeScanner {
	/** Feed one line (without its newline), 1-based line number. Bounded memory whatever the count. */
	line(text: string, lineNo: number): void;
	finish(hints?: OutcomeHints): Outcome;
}

export type LineKind =
	| "summary"
	| "failure"
	| "exception"
	| "location"
	| "error"
	| "warning"
	| "trace"
	| "progress"
	| "usage-option"
	| "bullet"
	| "blank"
	| "plain";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes start with ESC.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** The text without ANSI escape sequences (CSI, OSC and two-byte escapes). */
export function stripAnsi(text: string): string {
	return text.includes("\u001b") ? text.replace(ANSI, "") : text;
}

export function createOutcomeScanner(): OutcomeScanner {
	const summaryLines: number[] = [];
	return {
		line(text, lineNo) {
			if (classifyLine(text) === "summary" && summaryLines.length < 64) summaryLines.push(lineNo);
		},
		finish(hints) {
			const exitCode = hints?.exitCode ?? null;
			const failed = (exitCode !== null && exitCode !== 0) || hints?.isError === true;
			return {
				runner: exitCode !== null ? "exit-status" : null,
				status: failed ? "fail" : "unknown",
				counts: null,
				failingIds: [],
				exceptions: [],
				locations: [],
				summaryLines,
				exitCode,
			};
		},
	};
}

export function parseOutcome(text: string, hints?: OutcomeHints): Outcome {
	const scanner = createOutcomeScanner();
	const lines = text.split("\n");
	for (let i = 0; i < lines.length; i++) scanner.line(lines[i].replace(/\r$/, ""), i + 1);
	return scanner.finish(hints);
}

export function classifyLine(text: string): LineKind {
	const t = stripAnsi(text).slice(0, 4096);
	if (t.trim() === "") return "blank";
	if (/^=+ .* =+$/.test(t.trim())) return "summary";
	return "plain";
}

export function outcomeSignature(outcome: Outcome): string {
	return JSON.stringify({
		runner: outcome.runner,
		status: outcome.status,
		counts: outcome.counts,
		failing: [...outcome.failingIds].sort(),
		exceptions: [...new Set(outcome.exceptions.map((e) => e.type))].sort(),
	});
}
