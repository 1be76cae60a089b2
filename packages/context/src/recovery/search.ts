import { visibleText } from "../outcome/index.js";
import type { ObservationRecord } from "../types.js";
import { BoundedText, displayLine } from "./output.js";
import type { RecoveryContext, RecoveryHints, RecoveryLimits, RecoveryResponse } from "./types.js";

interface ShownLine {
	line: number;
	text: string;
	/** Index of the match (0-based, across all searched observations) when the line is a selected hit. */
	match: number | null;
}

interface Block {
	id: string;
	lines: ShownLine[];
}

/** Paging state shared across the observations of one search. */
interface Scan {
	needle: string;
	contextLines: number;
	offset: number;
	max: number;
	/** Matches seen so far (all of them, for the total). */
	seen: number;
	/** Selected matches placed in blocks. */
	selected: number;
	lineMaxBytes: number;
	blocks: Block[];
	perObservation: Map<string, number>;
}

/**
 * Streams one observation line by line. Selected matches get `contextLines` before and after;
 * windows that touch or overlap merge into one block, so no line is shown twice.
 */
async function scanObservation(context: RecoveryContext, record: ObservationRecord, scan: Scan): Promise<void> {
	const before: ShownLine[] = [];
	let open: Block | null = null;
	let after = 0;
	let lastShown = 0;
	let lastBlock: Block | null = null;
	let hits = 0;
	for await (const { line, text } of context.archive.lines(record.id)) {
		// What a reader sees (ANSI removed, final progress frame, control bytes as \xNN) is what the
		// capsule showed, so a string copied from it is found; the raw line matches too.
		const visible = visibleText(text);
		const isMatch =
			text.toLowerCase().includes(scan.needle) || (visible !== text && visible.toLowerCase().includes(scan.needle));
		let selectedIndex: number | null = null;
		if (isMatch) {
			hits++;
			const index = scan.seen++;
			if (index >= scan.offset && scan.selected < scan.max) {
				selectedIndex = index;
				scan.selected++;
			}
		}
		const filling = open !== null || scan.selected < scan.max || selectedIndex !== null;
		if (!filling) continue; // only counting from here on
		const shown: ShownLine = { line, text: displayLine(visible, scan.lineMaxBytes, scan.needle), match: selectedIndex };
		if (selectedIndex !== null) {
			if (!open) {
				const lead = before.filter((entry) => entry.line > lastShown);
				const first = lead[0]?.line ?? line;
				if (lastBlock && first === lastShown + 1) open = lastBlock;
				else {
					open = { id: record.id, lines: [] };
					scan.blocks.push(open);
				}
				open.lines.push(...lead);
			}
			open.lines.push(shown);
			lastShown = line;
			after = scan.contextLines;
			before.length = 0;
			if (after === 0) {
				lastBlock = open;
				open = null;
			}
		} else if (open) {
			open.lines.push(shown);
			lastShown = line;
			if (--after === 0) {
				lastBlock = open;
				open = null;
			}
		} else if (scan.contextLines > 0) {
			before.push(shown);
			if (before.length > scan.contextLines) before.shift();
		}
	}
	if (hits > 0) scan.perObservation.set(record.id, hits);
}

/** Case-insensitive fixed-string search over one observation, or the newest `limit` ones. */
export async function searchObservations(
	context: RecoveryContext,
	request: {
		id?: string;
		query: string;
		contextLines?: number;
		matchOffset?: number;
		maxMatches?: number;
		limit?: number;
	},
	limits: RecoveryLimits,
	hints: RecoveryHints,
): Promise<RecoveryResponse> {
	const records = request.id
		? [await context.archive.get(request.id)]
		: await context.archive.list(Math.min(request.limit ?? limits.searchDefaultObservations, limits.listMax));
	const contextLines = Math.min(request.contextLines ?? 2, limits.contextLinesMax);
	const scan: Scan = {
		needle: request.query.toLowerCase(),
		contextLines,
		offset: request.matchOffset ?? 0,
		max: Math.min(request.maxMatches ?? limits.searchMaxMatches, limits.searchMaxMatches),
		seen: 0,
		selected: 0,
		lineMaxBytes: limits.searchLineMaxBytes,
		blocks: [],
		perObservation: new Map(),
	};
	for (const record of records) await scanObservation(context, record, scan);

	const where = request.id ? request.id : `the newest ${records.length} observation${records.length === 1 ? "" : "s"}`;
	const query = JSON.stringify(request.query);
	if (scan.seen === 0 || scan.selected === 0) {
		const text =
			scan.seen === 0
				? `No match for ${query} in ${where} (case-insensitive fixed string).`
				: `${scan.seen} match${scan.seen === 1 ? "" : "es"} for ${query} in ${where}; matchOffset ${scan.offset} is past the last one. Start again: ${hints.search({ id: request.id, query: request.query })}`;
		return { action: "search", text, isError: false, evidence: false, truncated: false };
	}

	const out = new BoundedText(limits.responseMaxBytes);
	const spread = [...scan.perObservation.entries()].map(([id, n]) => `${id}: ${n}`).join(", ");
	out.add(
		`${scan.seen} match${scan.seen === 1 ? "" : "es"} for ${query} in ${where} (case-insensitive)${request.id ? "" : ` [${spread}]`}. Lines marked ":" match, "-" are context.`,
	);
	let lastMatchShown = scan.offset - 1;
	let previousId: string | null = null;
	outer: for (const block of scan.blocks) {
		const first = block.lines[0].line;
		const last = block.lines[block.lines.length - 1].line;
		const header = previousId === block.id ? `-- lines ${first}-${last}` : `${block.id} lines ${first}-${last}:`;
		if (!out.add(header)) break;
		previousId = block.id;
		for (const entry of block.lines) {
			if (!out.add(`${entry.line}${entry.match !== null ? ":" : "-"} ${entry.text}`)) break outer;
			if (entry.match !== null) lastMatchShown = entry.match;
		}
	}
	const shownCount = lastMatchShown - scan.offset + 1;
	const nextOffset = lastMatchShown + 1;
	let note: string;
	const next = hints.search({
		id: request.id,
		query: request.query,
		matchOffset: nextOffset,
		contextLines: request.contextLines,
		maxMatches: request.maxMatches,
		limit: request.id ? undefined : request.limit,
	});
	if (out.cut) {
		note = `[Cut to fit ${limits.responseMaxBytes} bytes after match ${nextOffset} of ${scan.seen}. Next: ${next}]`;
	} else if (nextOffset < scan.seen) {
		note = `[Showed matches ${scan.offset + 1}-${nextOffset} of ${scan.seen}. Next: ${next}]`;
	} else {
		note = `[Showed matches ${scan.offset + 1}-${nextOffset} of ${scan.seen}; no more matches.]`;
	}
	return {
		action: "search",
		text: out.finish(note),
		isError: false,
		evidence: shownCount > 0,
		truncated: out.cut || nextOffset < scan.seen,
	};
}
