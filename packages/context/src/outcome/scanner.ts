import type { Outcome } from "../types.js";
import { visibleLine } from "./ansi.js";
import { classifyLine, type LineKind } from "./classify.js";
import { scanLocations } from "./diagnostics.js";
import { createDiffParser } from "./diff.js";
import { createGenericParser } from "./generic.js";
import { createJavascriptParser } from "./javascript.js";
import { LineTable, lineSlot } from "./line-slot.js";
import { createPythonParser } from "./python.js";
import { ScanState } from "./state.js";
import { createToolchainParser } from "./toolchains.js";

/** Lines up to this long are remembered once scanned for locations. */
const LOCATED_CHARS = 200;

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
	 * `kind` is the line's `classifyLine` kind when the caller has it already (else it is worked out).
	 */
	line(text: string, lineNo: number, kind?: LineKind): void;
	finish(hints?: OutcomeHints): Outcome;
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
	/**
	 * Recent short lines already scanned for locations: a line seen before names only locations
	 * already recorded (or refused, for good), so its scan is skipped.
	 */
	const located = new LineTable<true>();
	return {
		line(raw, lineNo, kind) {
			const text = visibleLine(raw);
			if (diff(text, lineNo)) return;
			state.shapedLike(kind ?? classifyLine(raw), lineNo);
			if (text.length > LOCATED_CHARS) scanLocations(text, lineNo, state);
			else {
				const slot = lineSlot(text);
				if (located.get(text, slot) === undefined) {
					scanLocations(text, lineNo, state);
					located.set(text, slot, true);
				}
			}
			const trimmed = text.trim();
			state.startLine(text, trimmed);
			// Every family sees every line (each keeps its own multi-line context); the generic rules
			// apply only to lines no family claimed.
			const claimed = toolchain(text, trimmed, lineNo);
			const byPython = python(text, trimmed, lineNo);
			const byJavascript = javascript(text, trimmed, lineNo);
			if (!claimed && !byPython && !byJavascript) generic(text, trimmed, lineNo);
		},
		finish(hints) {
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
