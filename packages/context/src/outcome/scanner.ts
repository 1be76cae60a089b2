import type { Outcome } from "../types.js";
import { trimmedVisibleLine, visibleLine } from "./ansi.js";
import { classifyLine, type LineKind, type ShapedLines } from "./classify.js";
import { createDiffParser } from "./diff.js";
import { createGenericParser } from "./generic.js";
import { createJavascriptParser } from "./javascript.js";
import { type LineMemo, LineTable, lineSlot } from "./line-slot.js";
import { scanLocations } from "./locations.js";
import { createPythonParser } from "./python.js";
import { ScanState } from "./state.js";
import { createToolchainParser } from "./toolchains.js";

/** Lines up to this long are remembered once scanned (see `known`). */
const LOCATED_CHARS = 200;
/** The line was scanned for locations. */
const LOCATED = 1;

export interface ScanOptions {
	/**
	 * Copy what is kept past its line (ids, exceptions, locations) off the text it was cut from
	 * (default true; see `ownCopy`). Needless when the caller holds the whole text anyway.
	 */
	copyKept?: boolean;
}

/** What the host knows about the command beyond its text. */
export interface OutcomeHints {
	tool?: string;
	command?: string;
	exitCode?: number | null;
	isError?: boolean;
}

export interface OutcomeScanner {
	/**
	 * Feed one line (without its newline), 1-based line number. Bounded memory whatever the count.
	 * `kind` is the line's `classifyLine` kind when the caller has it already (else it is worked out);
	 * null when the lines are classified elsewhere, which then hands their `ShapedLines` to `finish`.
	 * `memo`: where this scan's note on the line's text is kept, when the caller remembers lines of
	 * this exact text itself (null: a line it does not remember); left out, the scanner keeps its own.
	 */
	line(text: string, lineNo: number, kind?: LineKind | null, memo?: LineMemo | null): void;
	/**
	 * The outcome. `shaped`: the shaped lines of a scan fed `kind` null, as `noteShaped` records them
	 * from the classifier's kinds of the same lines, leaving out the lines this scanner reads as a
	 * diff's (`isDiffTarget`; a hunk's lines are never classified as shaped).
	 */
	finish(hints?: OutcomeHints, shaped?: ShapedLines): Outcome;
}

/**
 * A streaming outcome parser: feed every line once, in order, then `finish`. Each line costs time linear
 * in its length (patterns see at most its first 4 KiB) and the scanner's memory is bounded by fixed caps.
 */
export function createOutcomeScanner(options: ScanOptions = {}): OutcomeScanner {
	const state = new ScanState(options.copyKept ?? true);
	const diff = createDiffParser(state);
	const toolchain = createToolchainParser(state);
	const python = createPythonParser(state);
	const javascript = createJavascriptParser(state);
	const generic = createGenericParser(state);
	const families = [toolchain, python, javascript, generic];
	/** The families' modes in one number, four bits each (see `LineFamily.mode`); -1 when one of them reads on. */
	const modes = (lineNo: number): number => {
		const a = toolchain.mode(lineNo);
		const b = python.mode(lineNo);
		const c = javascript.mode(lineNo);
		const d = generic.mode(lineNo);
		return a < 0 || b < 0 || c < 0 || d < 0 ? -1 : a | (b << 4) | (c << 8) | (d << 12);
	};
	/**
	 * What is known of recent short lines: `LOCATED`, or `inert(...)`. A line seen before names only
	 * locations already recorded (or refused, for good), so its location scan is skipped. A line no
	 * family took and that changed nothing is skipped by the families too when it comes again in the
	 * same modes (most repeated lines: blanks, indentation, passing tests...).
	 */
	const known = new LineTable<LineMemo>();
	/** A line found inert in these modes with this many runners confirmed (a few dozen runner names at most). */
	const inert = (mode: number, runners: number) => LOCATED | 2 | (mode << 2) | (runners << 18);
	return {
		line(raw, lineNo, kind, given) {
			const text = visibleLine(raw);
			if (diff(text, lineNo)) return;
			if (kind !== null) state.shapedLike(kind ?? classifyLine(raw), lineNo);
			let memo = given;
			if (memo === undefined && text.length <= LOCATED_CHARS) {
				const slot = lineSlot(text);
				memo = known.get(text, slot);
				if (memo === undefined) {
					memo = { scan: 0 };
					known.set(text, slot, memo);
				}
			}
			const seen = memo ? memo.scan : 0;
			if (seen === 0) scanLocations(text, lineNo, state);
			const mode = modes(lineNo);
			if (mode >= 0 && seen === inert(mode, state.runnersConfirmed)) return;
			const trimmed = trimmedVisibleLine(raw);
			state.startLine(text, trimmed, lineNo);
			const reports = state.reports;
			const failed = state.hardFailure;
			const exitCode = state.statedExitCode;
			// Every family sees every line (each keeps its own multi-line context); the generic rules
			// apply only to lines no family claimed.
			const claimed = toolchain.line(text, trimmed, lineNo);
			const byPython = python.line(text, trimmed, lineNo);
			const byJavascript = javascript.line(text, trimmed, lineNo);
			const taken = claimed || byPython || byJavascript || generic.line(text, trimmed, lineNo);
			if (!memo) return;
			const unchanged =
				mode >= 0 &&
				!taken &&
				state.reports === reports &&
				state.hardFailure === failed &&
				state.statedExitCode === exitCode &&
				modes(lineNo + 1) === mode;
			const now = unchanged ? inert(mode, state.runnersConfirmed) : LOCATED;
			memo.scan = now;
		},
		finish(hints, shaped) {
			for (const family of families) family.end?.();
			if (shaped) state.shapedAs(shaped);
			return state.build(hints?.exitCode, hints?.isError, hints?.command);
		},
	};
}

/** Parses a whole output at once (a convenience over the scanner; splits on `\n`, tolerates `\r\n`). */
export function parseOutcome(text: string, hints?: OutcomeHints): Outcome {
	const scanner = createOutcomeScanner();
	let start = 0;
	let lineNo = 1;
	for (;;) {
		const end = text.indexOf("\n", start);
		if (end < 0) {
			if (start < text.length || lineNo === 1) scanner.line(text.slice(start), lineNo);
			break;
		}
		scanner.line(text.slice(start, end), lineNo++);
		start = end + 1;
	}
	return scanner.finish(hints);
}
