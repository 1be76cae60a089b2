import {
	buildStructuredCapsule,
	type CapsuleBudgets,
	type CapsuleHeader,
	type CapsuleKind,
	compactFailingIds,
	exceptionsLine,
	FAILING_IDS_CEILING,
	failingIdsBlock,
	MEDIUM_RESULT_BYTES,
	outcomeHeadline,
	restSearchHints,
	runStatus,
	statusLines,
	utf8Bytes,
} from "../capsule/index.js";
import {
	lineDelta,
	renderLineDelta,
	renderOutcomeDelta,
	renderSectionDelta,
	renderUnchangedDelta,
	sameFailureDetail,
	sectionDelta,
	sharedLineBytes,
	splitLines,
} from "../delta/index.js";
import { outcomeSignature } from "../outcome/index.js";
import type { Decision, ObservationInput, Outcome } from "../types.js";
import type { Scan } from "./scan.js";
import type { OlderObservation, RecentObservation } from "./state.js";

/** The seed's rules, as numbers. */
export const RULES = {
	/** Medium results (8 KiB up to the threshold) passed through before later ones become capsules. */
	graceResults: 2,
	/** A failure below this passes through when its capsule would exceed `roiMaxRatio` of it. */
	roiBelowBytes: 8 * 1024,
	roiMaxRatio: 0.3,
	usageMinBytes: 4 * 1024,
	usageMinOptionLines: 10,
	/** Option lines must also be this share of non-blank lines: a listing, not a log that mentions flags. */
	usageMinOptionShare: 0.2,
	traceMinBytes: 2 * 1024,
	traceMinLines: 6,
	traceMinShare: 0.8,
	/** Output is repetitive when it has at most this many distinct line shapes per non-blank line. */
	repetitiveMaxShapeRatio: 0.5,
	repetitiveMinLines: 20,
	/** A clean exit without a test summary counts as a clean success only when this repetitive. */
	cleanMaxShapeRatio: 0.1,
	/** A terminal summary sits within this many lines of the end. */
	terminalSummaryLines: 15,
	/** Deltas: the novel remainder may be at most this share of the source. */
	deltaMaxNovelShare: 0.3,
	/** A line delta must also cut the visible size to at most half of the source: a delta the reader must mentally apply is worth it only when it saves much. */
	lineDeltaMaxShare: 0.5,
	minSectionBytes: 512,
} as const;

/** Access to earlier observations, for exact comparison. */
export interface EarlierBodies {
	/** Newest first; never includes the observation being decided. */
	recent: readonly RecentObservation[];
	/** Observations older than `recent`, newest first, by size only (bodies are read from the archive). */
	older: readonly OlderObservation[];
	/** An earlier observation's exact bytes, or null when unavailable or too large to hold. */
	body(id: string, bytes: number): Promise<Buffer | null>;
	/** An earlier text observation's text (`body` decoded), or null when unavailable or too large to hold. */
	text(id: string, bytes: number): Promise<string | null>;
	/** The earlier observation (already known to have the same size) has exactly the current content. */
	equals(earlier: { id: string; bytes: number; binary: boolean; text: string | null }): Promise<boolean>;
}

export interface DecisionContext {
	id: string;
	input: ObservationInput;
	scan: Scan;
	budgets: CapsuleBudgets;
	graceUsed: number;
	earlier: EarlierBodies;
	/** Workflow lines for a clean result (state and guard of a staged goal); empty otherwise. */
	workflow?: readonly string[];
}

export interface Verdict {
	decision: Decision;
	text: string;
	/** Why: `pass-through`, `grace`, `failure-roi`, `unchanged`, `outcome`, `line-delta`, `sections`, or a capsule kind. */
	reason: string;
	consumedGrace: boolean;
	/** Outcome signature and headline to remember for later outcome deltas; null when not structured. */
	signature: string | null;
	headline: string | null;
}

/** An outcome with structure worth comparing: counts, failing ids, exceptions, or a clean terminal summary. */
function isStructured(outcome: Outcome): boolean {
	if (outcome.runner === null || outcome.runner === "exit-status") return false;
	return (
		outcome.counts !== null ||
		outcome.failingIds.length > 0 ||
		outcome.exceptions.length > 0 ||
		(outcome.status === "pass" && outcome.summaryLines.length > 0)
	);
}

function pass(reason: string, ctx: DecisionContext, memo: Pick<Verdict, "signature" | "headline">): Verdict {
	return { decision: "pass-through", text: ctx.input.text, reason, consumedGrace: reason === "grace", ...memo };
}

function isRepetitive(scan: Scan): boolean {
	const s = scan.selection;
	return s.nonBlank >= RULES.repetitiveMinLines && s.distinctShapes <= s.sampledLines * RULES.repetitiveMaxShapeRatio;
}

function isUsage(scan: Scan): boolean {
	const options = scan.selection.kinds["usage-option"];
	return (
		scan.bytes >= RULES.usageMinBytes &&
		scan.outcome.counts === null &&
		options >= RULES.usageMinOptionLines &&
		options >= scan.selection.nonBlank * RULES.usageMinOptionShare
	);
}

/** A trace/debug/progress burst; a recognised test run (counts or failing ids) is not "trace-only". */
function isTraceBurst(scan: Scan): boolean {
	const trace = scan.selection.kinds.trace + scan.selection.kinds.progress;
	return (
		scan.outcome.counts === null &&
		scan.outcome.failingIds.length === 0 &&
		scan.bytes >= RULES.traceMinBytes &&
		trace >= RULES.traceMinLines &&
		trace >= scan.selection.nonBlank * RULES.traceMinShare
	);
}

/**
 * A clean success: a passing terminal summary, or a clean exit of highly repetitive output (few
 * line shapes, no error lines). Ordinary documents and diffs that exit 0 are not "clean": they
 * keep their recovery hints.
 */
function isClean(ctx: DecisionContext): boolean {
	const { outcome, selection } = ctx.scan;
	if (ctx.input.isError || outcome.failingIds.length > 0 || outcome.exceptions.length > 0) return false;
	// Failure evidence anywhere (a `FAIL: record 237 ...` line in a log that `cat` printed with exit 0)
	// is shown with recovery hints, never folded into a clean capsule.
	if (selection.kinds.failure + selection.kinds.exception + selection.kinds.error > 0) return false;
	const status = runStatus(outcome, ctx.input);
	// The passing summary must be terminal: near the end, not a quoted line inside a document or diff.
	const lastSummary = outcome.summaryLines.length > 0 ? Math.max(...outcome.summaryLines) : 0;
	if (status === "pass" && outcome.status === "pass" && lastSummary > ctx.scan.lines - RULES.terminalSummaryLines) {
		return true;
	}
	return (
		status !== "fail" &&
		ctx.input.exitCode === 0 &&
		selection.nonBlank >= RULES.repetitiveMinLines &&
		selection.distinctShapes <= selection.sampledLines * RULES.cleanMaxShapeRatio
	);
}

/** Older observations compared per repeat search at most (newest first): each costs an archive read. */
const OLDER_COMPARISONS = 20;

/** An earlier observation with exactly the same bytes: sizes first, then exact content, never hashes. */
async function exactRepeat(ctx: DecisionContext): Promise<{ id: string; tool: string } | null> {
	const { scan, earlier } = ctx;
	const sameSize = (r: { bytes: number; binary: boolean }) => r.bytes === scan.bytes && r.binary === scan.binary;
	for (const r of earlier.recent) {
		if (sameSize(r) && (await earlier.equals(r))) return { id: r.id, tool: r.tool };
	}
	for (const r of earlier.older.filter(sameSize).slice(0, OLDER_COMPARISONS)) {
		if (await earlier.equals({ ...r, text: null })) return { id: r.id, tool: r.tool };
	}
	return null;
}

async function tryLineDelta(ctx: DecisionContext, header: CapsuleHeader, status: string[]): Promise<string | null> {
	const candidates = ctx.earlier.recent.slice(0, 8).filter((r) => r.text !== null && !r.binary);
	// Decoding and splitting the body is most of the cost; without a candidate there is nothing to compare.
	const text = candidates.length > 0 ? ctx.scan.text() : null;
	if (text === null || ctx.scan.outcome.counts !== null) return null;
	let best: string | null = null;
	const lines = splitLines(text);
	for (const r of candidates) {
		if (r.text === null) continue;
		const before = [{ id: r.id, lines: splitLines(r.text) }];
		if (sharedLineBytes(lines, before) < ctx.scan.bytes * (1 - RULES.deltaMaxNovelShare)) continue;
		const delta = lineDelta(r.text, text, { maxEdit: Math.max(40, Math.ceil(ctx.scan.lines * 0.6)) });
		if (!delta || delta.addedBytes > ctx.scan.bytes * RULES.deltaMaxNovelShare) continue;
		const rendered = renderLineDelta(header, r.id, delta, status);
		if (utf8Bytes(rendered) > ctx.scan.bytes * RULES.lineDeltaMaxShare) continue;
		if (best === null || utf8Bytes(rendered) < utf8Bytes(best)) best = rendered;
	}
	return best;
}

async function trySectionDelta(ctx: DecisionContext, header: CapsuleHeader, status: string[]): Promise<string | null> {
	if (!ctx.scan.hasBody || ctx.scan.binary || ctx.scan.outcome.counts !== null) return null;
	const sources: { id: string; lines: string[] }[] = [];
	let loaded = 0;
	for (const r of ctx.earlier.recent.slice(0, 8)) {
		if (r.binary) continue;
		let earlierText = r.text;
		if (earlierText === null && loaded < 4) {
			loaded++;
			earlierText = await ctx.earlier.text(r.id, r.bytes);
		}
		if (earlierText !== null) sources.push({ id: r.id, lines: splitLines(earlierText) });
	}
	if (sources.length === 0) return null;
	const text = ctx.scan.text();
	if (text === null) return null;
	const lines = splitLines(text);
	// Linear pre-check: if too few lines occur earlier at all, no alignment can admit a delta.
	if (sharedLineBytes(lines, sources) < ctx.scan.bytes * (1 - RULES.deltaMaxNovelShare)) return null;
	const delta = sectionDelta(lines, sources, { minSectionBytes: RULES.minSectionBytes });
	if (!delta || delta.novelBytes > delta.totalBytes * RULES.deltaMaxNovelShare) return null;
	const rendered = renderSectionDelta(header, delta, status);
	return utf8Bytes(rendered) <= ctx.budgets.threshold ? rendered : null;
}

/**
 * The current output's failure detail is the earlier one's (`sameFailureDetail`). Unknown when a
 * text is not held (binary, or over the 1 MiB kept in memory): then it is not the same, and the run
 * is shown as a capsule.
 */
async function sameDetailAs(ctx: DecisionContext, earlier: RecentObservation): Promise<boolean> {
	const text = ctx.scan.text();
	if (text === null || earlier.binary) return false;
	const before = earlier.text ?? (await ctx.earlier.text(earlier.id, earlier.bytes));
	return before !== null && sameFailureDetail(before, text);
}

/** An outcome delta whose failing-id block is bounded like a capsule's (see `failingIdsBlock`). */
function outcomeDelta(
	ctx: DecisionContext,
	header: CapsuleHeader,
	earlierId: string,
	headline: string,
	status: string[],
): string {
	const { outcome } = ctx.scan;
	const exceptions = exceptionsLine(outcome);
	const details = exceptions ? [...status.slice(1), exceptions] : status.slice(1);
	const bare = utf8Bytes(renderOutcomeDelta(header, earlierId, headline, details, []));
	const ceiling = Math.min(FAILING_IDS_CEILING * ctx.budgets.large, ctx.scan.bytes);
	const ids = failingIdsBlock(
		compactFailingIds(outcome.failingIds),
		outcome.unrecordedFailingIds ?? 0,
		ceiling - bare,
		() => restSearchHints(header.id, outcome),
		outcome.counts?.failed,
	);
	return renderOutcomeDelta(header, earlierId, headline, details, ids);
}

/** Which structured capsule an output needs, if any, before the grace and return-on-investment rules. */
function capsuleKind(ctx: DecisionContext): CapsuleKind | "medium-candidate" | null {
	const { scan, budgets } = ctx;
	if (scan.mostlyBinary) return "binary";
	// A clean test run often looks like a progress burst; its terminal summary is what matters.
	if (scan.bytes >= MEDIUM_RESULT_BYTES && isClean(ctx)) return "clean";
	if (isUsage(scan)) return "usage";
	if (isTraceBurst(scan)) return "trace";
	if (scan.bytes >= budgets.threshold) {
		// A failed run keeps the full budget for its evidence, however repetitive its passing lines.
		const failed = runStatus(scan.outcome, ctx.input) === "fail";
		return isRepetitive(scan) && !failed ? "repetitive" : "large";
	}
	if (scan.bytes >= MEDIUM_RESULT_BYTES) return "medium-candidate";
	return null;
}

function budgetFor(kind: CapsuleKind, budgets: CapsuleBudgets): number {
	switch (kind) {
		case "large":
			return budgets.large;
		case "repetitive":
			return budgets.repetitive;
		case "clean":
			return budgets.clean;
		default:
			return budgets.compact;
	}
}

/**
 * The seed's decision rules, in order: empty output passes through; exact repeats and identical
 * outcomes become deltas; binary, usage listings and trace bursts become capsules; large output
 * becomes a composite-section delta or a structured capsule; medium output may be a changed
 * section, passes through during the two-result grace and is a compact capsule after it; small
 * output may be a changed section and otherwise passes through. A failure under 8 KiB whose
 * capsule would exceed 30% of it passes through. A delta or capsule that would not be smaller
 * than the output passes through.
 */
export async function decide(ctx: DecisionContext): Promise<Verdict> {
	const { scan, input, id } = ctx;
	const header: CapsuleHeader = { id, tool: input.tool, bytes: scan.bytes, lines: scan.lines, source: scan.source };
	// The signature holds the evidence lines too (exception messages, failure and location lines), so a
	// test failing with another message or at another line is never "unchanged"; when the evidence is
	// too large to hold, nothing can be proved unchanged and there is no signature.
	const structured = isStructured(scan.outcome) && scan.selection.evidence !== null;
	const memo = {
		signature: structured ? `${outcomeSignature(scan.outcome)}\nevidence=${scan.selection.evidence}` : null,
		headline: structured ? outcomeHeadline(scan.outcome, input) : null,
	};
	if (scan.bytes === 0) return pass("pass-through", ctx, memo);
	// A visible text read as the source is exactly the bytes scanned: no second pass over a megabyte to measure it.
	const original = scan.source === "visible-tool-result" ? scan.bytes : utf8Bytes(input.text);
	const smaller = (text: string) => utf8Bytes(text) < Math.max(original, scan.bytes);
	// The tracker gives workflow lines only for a clean result; deltas of it carry them too.
	const status = [...statusLines(scan.outcome, input), ...(ctx.workflow ?? [])];

	const repeat = await exactRepeat(ctx);
	if (repeat) {
		const text = renderUnchangedDelta(header, repeat, status);
		if (smaller(text)) return { decision: "delta-capsule", text, reason: "unchanged", consumedGrace: false, ...memo };
	}
	const kind = capsuleKind(ctx);
	// Short results pass through as they are (the seed); only what would be a capsule may be an outcome delta.
	if (kind !== null && memo.signature !== null && memo.headline !== null) {
		const last = ctx.earlier.recent.find((r) => r.tool === input.tool && r.signature !== null);
		if (
			last &&
			last.signature === memo.signature &&
			last.headline === memo.headline &&
			(await sameDetailAs(ctx, last))
		) {
			const text = outcomeDelta(ctx, header, last.id, memo.headline, status);
			if (smaller(text)) return { decision: "delta-capsule", text, reason: "outcome", consumedGrace: false, ...memo };
		}
	}

	if (kind === "large" || kind === "repetitive") {
		const delta = await trySectionDelta(ctx, header, status);
		if (delta && smaller(delta))
			return { decision: "delta-capsule", text: delta, reason: "sections", consumedGrace: false, ...memo };
	}
	if (kind === null || kind === "medium-candidate") {
		const delta = await tryLineDelta(ctx, header, status);
		if (delta) return { decision: "delta-capsule", text: delta, reason: "line-delta", consumedGrace: false, ...memo };
	}
	if (kind === null) return pass("pass-through", ctx, memo);
	if (kind === "medium-candidate" && ctx.graceUsed < RULES.graceResults) return pass("grace", ctx, memo);
	// Usage listings are archived at once (the seed); the return-on-investment rule is for sampled failures.
	const roiApplies = kind !== "usage" && !scan.mostlyBinary;

	const capsuleKindFinal: CapsuleKind = kind === "medium-candidate" ? "medium" : kind;
	const capsule = buildStructuredCapsule({
		header,
		kind: capsuleKindFinal,
		budget: budgetFor(capsuleKindFinal, ctx.budgets),
		outcome: scan.outcome,
		selection: scan.selection,
		facts: { isError: input.isError, exitCode: input.exitCode, command: input.command },
		workflow: ctx.workflow,
	});
	const capsuleBytes = utf8Bytes(capsule.text);
	const failed = runStatus(scan.outcome, input) === "fail";
	if (failed && roiApplies && scan.bytes < RULES.roiBelowBytes && capsuleBytes > scan.bytes * RULES.roiMaxRatio) {
		return pass("failure-roi", ctx, memo);
	}
	if (!scan.mostlyBinary && !smaller(capsule.text)) return pass("pass-through", ctx, memo);
	return {
		decision: "structured-capsule",
		text: capsule.text,
		reason: capsuleKindFinal,
		consumedGrace: false,
		...memo,
	};
}
