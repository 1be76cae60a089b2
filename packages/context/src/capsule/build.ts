import { type IdMark, type LineKind, UNSAFE_MARK } from "../outcome/index.js";
import type { Outcome } from "../types.js";
import { capsuleLinesBytes, utf8Bytes } from "./escape.js";
import { failingIdsBlock, fileOfId } from "./failing-block.js";
import { compactFailingIds } from "./failing-ids.js";
import { failureMessageBlock } from "./failure-messages.js";
import { locationLines } from "./locations.js";
import type { ExcerptLine } from "./pack.js";
import { type CapsuleHeader, type RenderedCapsule, renderCapsule } from "./render.js";
import type { KeptLine, Selection } from "./select.js";
import { foldKey, foldsByText } from "./shape.js";
import { exceptionsLine, type RunFacts, runStatus, statusLines } from "./status.js";

/**
 * Why a result became a structured capsule; each kind has its own budget and excerpt policy.
 * - `large`: at or above the threshold; `repetitive`: large and mostly lines of few shapes;
 * - `clean`: a clean success (terminal summary plus a short informative head, no hints);
 * - `medium`: an 8-24 KiB result after the two-result grace; `usage`: a help/usage listing;
 * - `trace`: a trace/debug/progress burst; `binary`: mostly not text (over 10% NUL or invalid UTF-8 bytes).
 */
export type CapsuleKind = "large" | "repetitive" | "clean" | "medium" | "usage" | "trace" | "binary";

export interface StructuredCapsuleInput {
	header: CapsuleHeader;
	kind: CapsuleKind;
	budget: number;
	outcome: Outcome;
	selection: Selection;
	facts: RunFacts & { command?: string };
	/** Workflow state and guard lines, shown in a clean capsule only. */
	workflow?: readonly string[];
}

export interface StructuredCapsule extends RenderedCapsule {
	/** The capsule carries Read/Search recovery hints. */
	hints: boolean;
}

const NOTICE = "Large output archived locally. The excerpt below is incomplete.";
/** Kinds that are at or above the threshold; the others (medium, usage, trace) may be smaller. */
const LARGE_KINDS: ReadonlySet<CapsuleKind> = new Set(["large", "repetitive", "clean"]);
const RECOVERY_ONLY_NOTICE =
	"Large output archived locally. No excerpt fits this capsule; recover exact text as below.";
const BINARY_NOTICE =
	"Binary output archived locally, byte-exact: over 10% of its bytes are NUL or not valid UTF-8, so no excerpt is shown.";

/** Lines whose text is only trace, debug or progress noise. */
const NOISE: ReadonlySet<LineKind> = new Set(["trace", "progress", "blank"]);

/** Priority of a decisive line of each kind; lower is shown first. */
const DECISIVE_PRIORITY: Partial<Record<LineKind, number>> = {
	failure: 1,
	exception: 1,
	error: 2,
	location: 2,
	summary: 3,
	warning: 4,
};

function toExcerpt(kept: KeptLine, priority: number): ExcerptLine {
	const identical = foldsByText(kept.kind) || kept.afterFold === true;
	return { line: kept.line, text: kept.text, priority, bytes: kept.bytes, repeats: kept.repeats, identical };
}

/** The terminal outcome: the last few summary-shaped lines. */
function terminalSummaries(selection: Selection, count = 3): KeptLine[] {
	return selection.decisive.filter((k) => k.kind === "summary").slice(-count);
}

/** A decisive diagnostic exists: something a reader would want to look at. */
export function hasDecisiveDiagnostic(selection: Selection, outcome: Outcome): boolean {
	return (
		outcome.failingIds.length > 0 ||
		outcome.exceptions.length > 0 ||
		selection.decisive.some((k) => k.kind === "failure" || k.kind === "exception" || k.kind === "error")
	);
}

/** Head and tail lines as excerpt candidates; bullets and noise rank last. */
function headTail(selection: Selection, priority: number, headCount: number, tailCount: number): ExcerptLine[] {
	const rank = (k: KeptLine) => (NOISE.has(k.kind) ? priority + 4 : k.kind === "bullet" ? priority + 3 : priority);
	const head = selection.head.filter((k) => k.kind !== "blank").slice(0, headCount);
	const tail = selection.tail.filter((k) => k.kind !== "blank").slice(-tailCount);
	return [...head, ...tail].map((k) => toExcerpt(k, rank(k)));
}

/**
 * One candidate per line shape (the most important one), so a line repeated hundreds of times
 * appears once with its count instead of again in the head or tail; failure and exception lines are
 * evidence, folded only with identical ones (`foldKey`). Summary lines are exempt, and so is the
 * output's last line: where the output ends shows, even when its lines there repeat a shape shown
 * earlier.
 */
function onePerShape(candidates: ExcerptLine[], kinds: Map<number, LineKind>, lastLine: number): ExcerptLine[] {
	const seen = new Set<string | number>();
	const ordered = [...candidates].sort((a, b) => a.priority - b.priority || a.line - b.line);
	return ordered.filter((c) => {
		const kind = kinds.get(c.line);
		if (kind === "summary") return true;
		const shape = c.identical ? c.text : foldKey(kind, c.text);
		// A last line of evidence identical to one shown is in that line's count already.
		if (c.line === lastLine && !(foldsByText(kind) && seen.has(shape))) return true;
		if (seen.has(shape)) return false;
		seen.add(shape);
		return true;
	});
}

function excerptFor(input: StructuredCapsuleInput, failed: boolean, shown: ReadonlySet<number>): ExcerptLine[] {
	const { selection } = input;
	const kinds = new Map<number, LineKind>();
	for (const k of [...selection.head, ...selection.tail, ...selection.context, ...selection.decisive]) {
		kinds.set(k.line, k.kind);
	}
	const last = selection.tail.findLast((k) => k.kind !== "blank")?.line ?? 0;
	// The failure messages above show their lines already.
	let candidates = onePerShape(rawExcerpt(input), kinds, last).filter((c) => !shown.has(c.line));
	// In a compact failure capsule, bullet prose (staged requirements, notes) must not take room from evidence.
	if (failed && input.budget <= 2048) candidates = candidates.filter((c) => kinds.get(c.line) !== "bullet");
	return candidates;
}

function rawExcerpt(input: StructuredCapsuleInput): ExcerptLine[] {
	const { selection, kind } = input;
	const terminal = new Set(terminalSummaries(selection).map((k) => k.line));
	if (kind === "binary") return [];
	if (kind === "clean") {
		// Terminal summary plus an informative head: no trace, progress, bullets or blank lines.
		const head = selection.head.filter((k) => !NOISE.has(k.kind) && k.kind !== "bullet").slice(0, 6);
		return [
			...terminalSummaries(selection).map((k) => toExcerpt(k, 0)),
			...head.map((k, i) => toExcerpt(k, 1 + i / 100)),
		];
	}
	const out: ExcerptLine[] = [];
	// With the failing ids listed above the excerpt, failure header lines mostly repeat them: the
	// exception messages and error lines say more.
	const idsListed = input.outcome.failingIds.length > 0;
	for (const k of selection.decisive) {
		// Further evidence lines of a shape already shown come after every distinct line (never dropped).
		const kindPriority = k.shapeSeen ? 4.5 : k.kind === "failure" && idsListed ? 2.5 : (DECISIVE_PRIORITY[k.kind] ?? 5);
		const base = terminal.has(k.line) ? 0 : kindPriority;
		out.push(toExcerpt(k, base));
	}
	for (const k of selection.context) out.push(toExcerpt(k, k.kind === "bullet" ? 8 : 3.5));
	if (kind === "usage") {
		// The leading lines hold the fatal or usage evidence.
		out.push(...selection.head.filter((k) => k.kind !== "blank").map((k, i) => toExcerpt(k, 0.5 + i / 100)));
	} else if (kind === "trace") {
		out.push(...headTail(selection, 5, 3, 3));
	} else {
		out.push(...headTail(selection, 5, 8, 12));
	}
	return out;
}

/** The line a reader should look at first: leading exception or failure, then errors, then the summary. */
function focusLine(selection: Selection): number | null {
	const order: LineKind[] = ["exception", "failure", "error", "location", "summary"];
	for (const kind of order) {
		const found = selection.decisive.find((k) => k.kind === kind);
		if (found) return found.line;
	}
	return null;
}

/**
 * For a usage listing the evidence leads: the first fatal or error line of the head, else its first
 * line; the search string is the start of that line (checked to occur in the raw text).
 */
function usageFocus(selection: Selection): { line: number; query: string | null } {
	const head = selection.head.filter((k) => k.kind !== "blank");
	const lead = head.find((k) => k.kind === "error" || k.kind === "exception" || k.kind === "failure") ?? head[0];
	if (!lead) return { line: 1, query: null };
	const query = lead.raw
		.trim()
		.slice(0, 40)
		.replace(/\s+\S*$/, "");
	return { line: lead.line, query: usableQuery(query) && lead.raw.includes(query) ? query : null };
}

/** Characters a search query must avoid: they would need quoting or escaping in the hint. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is rejected.
const UNSAFE_QUERY = /["&<\\\u0000-\u001f\u007f]/;

function usableQuery(query: string): boolean {
	const trimmed = query.trim();
	return trimmed.length >= 3 && trimmed.length <= 160 && trimmed === query && !UNSAFE_QUERY.test(query);
}

/**
 * A fixed string that really occurs in the archived text, checked against the raw kept lines:
 * a `FAIL ...` line naming a failing id, else a failing id, else an exception type, else the start
 * of an error, exception or failure line. Null when no safe string exists (the search hint is then omitted).
 */
export function chooseSearchQuery(selection: Selection, outcome: Outcome): string | null {
	const kept = [...selection.decisive, ...selection.context, ...selection.head, ...selection.tail];
	const occurs = (q: string) => kept.some((k) => k.raw.includes(q));
	const ids = outcome.failingIds.slice(0, 200).filter(usableQuery);
	for (const k of selection.decisive) {
		if (k.kind !== "failure" || !/^\s*FAIL/.test(k.raw)) continue;
		const start = k.raw.indexOf("FAIL");
		for (const id of ids) {
			const at = k.raw.indexOf(id, start);
			if (at === -1) continue;
			const query = k.raw.slice(start, at + id.length);
			if (usableQuery(query)) return query;
		}
	}
	for (const id of ids) if (occurs(id)) return id;
	for (const e of outcome.exceptions.slice(0, 50)) if (usableQuery(e.type) && occurs(e.type)) return e.type;
	for (const k of selection.decisive) {
		if (k.kind !== "error" && k.kind !== "exception" && k.kind !== "failure") continue;
		const query = k.raw
			.trim()
			.slice(0, 60)
			.replace(/\s+\S*$/, "");
		if (usableQuery(query) && k.raw.includes(query)) return query;
	}
	return null;
}

/** A capsule with many failing ids may grow to this many times its budget (never past the output's size). */
export const FAILING_IDS_CEILING = 4;

/**
 * When the failing ids do not all fit under the ceiling, at most this share of their room is kept
 * for the location list instead (never more than the locations need or the budget beside the fixed
 * parts allows), so a huge run shows both kinds of decisive fact: most of its ids and its most
 * decisive locations, each with the exact search for the rest.
 */
export const LOCATIONS_SHARE_OF_OVERFLOW = 0.25;

/** Said after the mark searches when some failing id was printed under none of them. */
export const REST_BY_FILE = "(An id under another mark: search for its file, as counted above.)";

/** Failure marks searched for the ids a capsule could not list, at most. */
const MAX_REST_MARKS = 6;

/**
 * The searches that list failing ids a capsule could not: one per mark the ids were printed under
 * (`FAILED`, `ERROR`, `✖`, `not ok`; see `markAround`), read from every line naming a failing id as
 * the scan went (pytest marks errors apart from failures), those under which most ids were printed
 * first; a mark holding another (`✖ FAIL` holds `✖`) is left to the other's search, which finds its
 * lines too. Else the file of the last id. `REST_BY_FILE` follows when some id may be under none of
 * the searched marks. Empty when no search is safe to quote.
 */
export function restSearchHints(id: string, outcome: Outcome): string[] {
	const marks: IdMark[] = [];
	for (const entry of outcome.failingIdMarks ?? []) {
		if (marks.some((kept) => entry.mark.includes(kept.mark))) continue;
		for (let i = marks.length - 1; i >= 0; i--) if (marks[i].mark.includes(entry.mark)) marks.splice(i, 1);
		marks.push(entry);
	}
	const searched = [...marks].sort((a, b) => b.ids - a.ids).slice(0, MAX_REST_MARKS);
	const queries = searched.map((entry) => entry.mark);
	if (queries.length === 0) {
		const ids = outcome.failingIds;
		const file = ids.length > 0 ? fileOfId(ids[ids.length - 1]) : null;
		if (file !== null && !UNSAFE_MARK.test(file)) queries.push(file);
	}
	const hints = queries.map((query) => `Search the rest: prime_context action=search id=${id} query="${query}"`);
	// An unmarked short name that a listed whole id stands for (`____ test_a[0] ____` for
	// `t.py::test_a[0]`, see `compactFailingIds`) is found with that id.
	const listed = new Set(compactFailingIds(outcome.failingIds));
	const unmarked =
		(outcome.unmarkedUnrecordedIds ?? 0) > 0 ||
		(outcome.unmarkedFailingIds ?? []).some((failing) => listed.has(failing));
	const everyMark = searched.length === marks.length && !unmarked;
	if (searched.length > 0 && !everyMark) hints.push(REST_BY_FILE);
	return hints;
}

/** Recovery hints: a Read window from 20 lines before to 10 after the focus line, and a true Search string. */
export function recoveryHints(id: string, lines: number, focus: number | null, query: string | null): string[] {
	const at = focus ?? 1;
	const startLine = Math.max(1, at - 20);
	const endLine = Math.max(startLine, Math.min(lines, at + 10));
	const hints = [
		`Read exact visible text: prime_context action=read id=${id} startLine=${startLine} endLine=${endLine}`,
	];
	if (query !== null) hints.push(`Search exact visible text: prime_context action=search id=${id} query="${query}"`);
	return hints;
}

function traceAdvice(command: string | undefined): string {
	const what = command ? `the original command (${command.slice(0, 200)})` : "the original command";
	return `Trace-only output with no decisive diagnostic; nothing here needs reading. If you need specific lines, rerun ${what} with its output filtered (for example through grep) to those lines.`;
}

/**
 * Room kept for excerpt evidence before the location list takes the rest: up to 1 KiB (a third of
 * small budgets) when there is failure evidence to show, a quarter of that otherwise (a diff, a
 * listing), where the locations are the summary.
 */
function evidenceReserve(budget: number, failure: boolean): number {
	const reserve = Math.min(1024, Math.floor(budget / 3));
	return failure ? reserve : Math.floor(reserve / 4);
}

/** Builds a structured capsule of the given kind within its budget. */
export function buildStructuredCapsule(input: StructuredCapsuleInput): StructuredCapsule {
	const { header, kind, outcome, selection, facts } = input;
	const failed = runStatus(outcome, facts) === "fail";
	const status = statusLines(outcome, facts);
	if (kind === "clean") status.push(...(input.workflow ?? []));
	if (kind !== "clean") {
		const exceptions = exceptionsLine(outcome);
		if (exceptions) status.push(exceptions);
	}
	if (kind === "trace") {
		const trace = selection.kinds.trace + selection.kinds.progress;
		status.push(
			`TRACE_BURST: ${trace} of ${selection.nonBlank} non-blank lines are trace, debug or progress output; one line per shape is shown, and the last line.`,
		);
	}
	const decisive = hasDecisiveDiagnostic(selection, outcome) || failed;
	const withHints = kind !== "binary" && kind !== "clean" && !(kind === "trace" && !decisive);
	const footer: string[] = [];
	if (withHints) {
		const usage = kind === "usage" ? usageFocus(selection) : null;
		const focus = usage ? usage.line : focusLine(selection);
		const query = usage ? usage.query : chooseSearchQuery(selection, outcome);
		footer.push(...recoveryHints(header.id, header.lines, focus, query));
	}
	if (kind === "trace" && !decisive) footer.push(traceAdvice(facts.command));
	const compact = input.budget <= 2048;
	const maxLineBytes = kind === "clean" ? 160 : compact ? 200 : 256;
	// A failing capsule shows the first failure's message and one example of each other message ahead
	// of the failing ids, in the room kept for evidence: a capsule full of ids still says what fails.
	const reserve = evidenceReserve(input.budget, true);
	const withMessages = failed && kind !== "clean" && kind !== "binary";
	let messages = failureMessageBlock(withMessages ? selection.messages : [], reserve, maxLineBytes, selection.decisive);
	const parts = {
		header,
		notice:
			kind === "binary" ? BINARY_NOTICE : LARGE_KINDS.has(kind) ? NOTICE : NOTICE.replace("Large output", "Output"),
		recoveryOnlyNotice: RECOVERY_ONLY_NOTICE,
		status,
		messages: messages.lines,
		failingIds: [] as string[],
		excerpt: excerptFor(input, failed, messages.shown),
		maxLineBytes,
		footer,
	};
	if (kind !== "clean") {
		// With the ids overflowing, the capsule may take its recovery-only form: count the longer notice.
		const notice = utf8Bytes(RECOVERY_ONLY_NOTICE) > utf8Bytes(parts.notice) ? RECOVERY_ONLY_NOTICE : parts.notice;
		let withoutIds = utf8Bytes(renderCapsule({ ...parts, notice, excerpt: [] }, input.budget).text);
		// Failing ids may take the capsule past its budget, up to a hard ceiling; past that they are
		// counted per file, with the search that lists them.
		const ceiling = Math.min(FAILING_IDS_CEILING * input.budget, header.bytes);
		const ids = compactFailingIds(outcome.failingIds);
		const unrecorded = outcome.unrecordedFailingIds ?? 0;
		let hints: string[] | undefined;
		const restHints = () => {
			hints ??= restSearchHints(header.id, outcome);
			return hints;
		};
		let idRoom = ceiling - withoutIds;
		parts.failingIds = failingIdsBlock(ids, unrecorded, idRoom, restHints, outcome.counts?.failed);
		const overflows = (block: readonly string[]) => block.length > 0 && block[0].endsWith("more below):");
		const messagesBytes = messages.bytes;
		if (overflows(parts.failingIds) && messagesBytes > 0) {
			// Every id that fits under the ceiling stays listed: the messages then get what the ids leave.
			const all = failingIdsBlock(ids, unrecorded, idRoom + messagesBytes, restHints, outcome.counts?.failed);
			if (!overflows(all)) {
				const left = idRoom + messagesBytes - capsuleLinesBytes(all);
				messages = failureMessageBlock(selection.messages, Math.min(reserve, left), maxLineBytes, selection.decisive);
				parts.messages = messages.lines;
				parts.excerpt = excerptFor(input, failed, messages.shown);
				withoutIds += messages.bytes - messagesBytes;
				idRoom = ceiling - withoutIds;
				parts.failingIds = all;
			}
		}
		if (overflows(parts.failingIds)) {
			// The ids overflow: keep a share of their room for the locations (as much as they need, if less).
			const wanted = Math.min(
				Math.floor(idRoom * LOCATIONS_SHARE_OF_OVERFLOW),
				input.budget - withoutIds,
				capsuleLinesBytes(locationLines(outcome, Math.max(0, input.budget - withoutIds))),
			);
			if (wanted > 0) {
				idRoom -= wanted;
				parts.failingIds = failingIdsBlock(ids, unrecorded, idRoom, restHints, outcome.counts?.failed);
			}
		}
		// Locations get what the fixed parts leave after a reserve for evidence lines. Only the failing-id
		// block may overflow the budget: when it does, or leaves no room for a single location beside the
		// reserve (no excerpt fits then), the locations get what both the budget beside the other fixed
		// parts and the ceiling beside the ids leave, so many ids never crowd out every location.
		const fixed = utf8Bytes(renderCapsule({ ...parts, excerpt: [] }, input.budget).text);
		// The failure messages are evidence: they take their bytes out of the evidence reserve.
		const evidence = evidenceReserve(input.budget, failed || outcome.exceptions.length > 0);
		const room = input.budget - fixed - Math.max(0, evidence - messages.bytes);
		let locations = fixed <= input.budget && room > 0 ? locationLines(outcome, room) : [];
		if (locations.length === 0 && (fixed > input.budget || parts.failingIds.length > 0)) {
			const crowded = Math.min(input.budget - withoutIds, ceiling - fixed);
			if (crowded > 0) locations = locationLines(outcome, crowded);
		}
		parts.status = [...status, ...locations];
	}
	const rendered = renderCapsule(parts, input.budget);
	return { ...rendered, hints: withHints };
}
