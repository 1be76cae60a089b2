import { classifyLine, type LineKind, stripAnsi } from "../outcome/index.js";
import { lineShape } from "./shape.js";

/** A line the selector kept, with its original coordinates. */
export interface KeptLine {
	/** 1-based line number. */
	line: number;
	/** ANSI-free text, capped at the selector's per-line bound. */
	text: string;
	/** The raw text (ANSI included), capped: any substring of it occurs in the archived line. */
	raw: string;
	/** UTF-8 bytes of the whole original line. */
	bytes: number;
	kind: LineKind;
	/** Lines of the same shape this one stands for (decisive lines only; 1 otherwise). */
	repeats: number;
}

export interface Selection {
	head: KeptLine[];
	tail: KeptLine[];
	/** Decisive lines (summary, failure, exception, error, location, warning), one per shape, with counts. */
	decisive: KeptLine[];
	/** Lines just before and after decisive failure, exception and error lines. */
	context: KeptLine[];
	lines: number;
	nonBlank: number;
	kinds: Record<LineKind, number>;
	/** Non-blank lines whose shape was tracked: all of the first `shapeAllLines`, then one in 8. */
	sampledLines: number;
	/** Distinct line shapes among the sampled lines (saturates at the tracking bound). */
	distinctShapes: number;
}

const DECISIVE: ReadonlySet<LineKind> = new Set(["summary", "failure", "exception", "error", "location", "warning"]);
/** Kinds whose neighbours are worth keeping as context. */
const WITH_CONTEXT: ReadonlySet<LineKind> = new Set(["failure", "exception", "error"]);

export interface SelectorLimits {
	headLines: number;
	tailLines: number;
	/** Distinct decisive shapes kept per kind. */
	perKind: number;
	/** Summary lines kept at the end (the terminal outcome is last). */
	lastSummaries: number;
	contextLines: number;
	/** Characters of a line's text kept (raw and ANSI-free). */
	lineChars: number;
	/** Distinct shapes tracked for repetition and deduplication. */
	shapes: number;
	/** Non-blank lines shaped one by one before sampling starts. */
	shapeAllLines: number;
}

export const DEFAULT_SELECTOR_LIMITS: SelectorLimits = {
	headLines: 30,
	tailLines: 30,
	perKind: 150,
	lastSummaries: 16,
	contextLines: 200,
	lineChars: 1024,
	shapes: 20_000,
	shapeAllLines: 1_000,
};

/** Past `shapeAllLines`, one non-blank line in this many is shaped for the repetition estimate. */
const SHAPE_SAMPLE_EVERY = 8;

/** A line as it streamed past, before (or instead of) becoming a `KeptLine`. */
interface RawLine {
	raw: string;
	line: number;
	/** UTF-8 bytes of the whole line; -1 when not yet measured. */
	bytes: number;
	kind: LineKind;
	kept?: KeptLine;
}

/** Builds a kept line: ANSI removed for display; bytes count what is shown (escapes removed from the kept part are not). */
function keptLine(raw: string, line: number, bytes: number, kind: LineKind): KeptLine {
	const text = stripAnsi(raw).replace(/\r$/, "");
	const whole = bytes >= 0 ? bytes : Buffer.byteLength(raw);
	const hidden = text.length === raw.length ? 0 : Buffer.byteLength(raw) - Buffer.byteLength(text);
	return { line, text, raw, bytes: whole - hidden, kind, repeats: 1 };
}

/**
 * Keeps, in bounded memory whatever the output's size, what a capsule can be built from: the head,
 * the tail, and the decisive lines with their original line numbers. Decisive lines of a shape
 * already kept only raise that line's count.
 */
export class LineSelector {
	private readonly head: KeptLine[] = [];
	private tailRaw: RawLine[] = [];
	private readonly decisive: KeptLine[] = [];
	private readonly lastSummary: KeptLine[] = [];
	private readonly context: KeptLine[] = [];
	private readonly decisiveByShape = new Map<string, KeptLine>();
	private readonly perKind = new Map<LineKind, number>();
	private readonly shapes = new Set<string>();
	private shapesOverflow = 0;
	private previous: RawLine | null = null;
	private sampledLines = 0;
	private wantAfter = false;
	private count = 0;
	private nonBlank = 0;
	private readonly kinds = Object.fromEntries(
		[
			"summary",
			"failure",
			"exception",
			"location",
			"error",
			"warning",
			"trace",
			"progress",
			"usage-option",
			"bullet",
			"blank",
			"plain",
		].map((k) => [k, 0]),
	) as Record<LineKind, number>;

	constructor(private readonly limits: SelectorLimits = DEFAULT_SELECTOR_LIMITS) {}

	/** Feeds one line (without its newline). `bytes` is the whole line's size when `raw` is capped. */
	line(raw: string, lineNo: number, bytes?: number): void {
		const capped = raw.length > this.limits.lineChars ? raw.slice(0, this.limits.lineChars) : raw;
		const kind = classifyLine(capped);
		this.count = lineNo;
		this.kinds[kind]++;
		const blank = kind === "blank";
		if (!blank) this.nonBlank++;
		const decisive = DECISIVE.has(kind);
		// Repetition is estimated from every line up to a bound, then from a regular sample.
		const sampled = !blank && (this.nonBlank <= this.limits.shapeAllLines || this.nonBlank % SHAPE_SAMPLE_EVERY === 0);
		const wantAfter = this.wantAfter && !blank && this.context.length < this.limits.contextLines;
		const needed = decisive || sampled || wantAfter || this.head.length < this.limits.headLines;
		// Lines nobody keeps are only counted; the tail keeps the raw text and builds the rest at the end.
		this.tailRaw.push({ raw: capped, line: lineNo, bytes: bytes ?? Buffer.byteLength(raw), kind });
		if (this.tailRaw.length > this.limits.tailLines * 2) this.tailRaw = this.tailRaw.slice(-this.limits.tailLines);
		if (!needed) {
			if (!blank) this.previous = { raw: capped, line: lineNo, bytes: bytes ?? -1, kind };
			return;
		}
		const kept = keptLine(capped, lineNo, bytes ?? Buffer.byteLength(raw), kind);
		const shape = blank || !(sampled || decisive) ? "" : lineShape(kept.text);
		if (sampled) {
			this.sampledLines++;
			this.trackShape(shape);
		}
		if (this.head.length < this.limits.headLines) this.head.push(kept);
		if (wantAfter) {
			if (!decisive) this.context.push(kept);
			this.wantAfter = false;
		}
		if (decisive) this.keepDecisive(kept, shape);
		if (!blank) this.previous = { raw: capped, line: lineNo, bytes: kept.bytes, kind, kept };
	}

	private trackShape(shape: string): void {
		if (this.shapes.has(shape)) return;
		if (this.shapes.size < this.limits.shapes) this.shapes.add(shape);
		else this.shapesOverflow++;
	}

	private keepDecisive(kept: KeptLine, shape: string): void {
		if (kept.kind === "summary") {
			this.lastSummary.push(kept);
			if (this.lastSummary.length > this.limits.lastSummaries) this.lastSummary.shift();
			return;
		}
		const key = `${kept.kind}\u0000${shape}`;
		const same = this.decisiveByShape.get(key);
		if (same) {
			same.repeats++;
			return;
		}
		const used = this.perKind.get(kept.kind) ?? 0;
		if (used >= this.limits.perKind) return;
		this.perKind.set(kept.kind, used + 1);
		this.decisiveByShape.set(key, kept);
		this.decisive.push(kept);
		if (WITH_CONTEXT.has(kept.kind) && this.context.length < this.limits.contextLines) {
			const before = this.previous;
			if (before && before.line === kept.line - 1 && !DECISIVE.has(before.kind)) {
				this.context.push(before.kept ?? keptLine(before.raw, before.line, before.bytes, before.kind));
			}
			this.wantAfter = true;
		}
	}

	finish(): Selection {
		const decisive = [...this.decisive, ...this.lastSummary].sort((a, b) => a.line - b.line);
		return {
			head: this.head,
			tail: this.tailRaw.slice(-this.limits.tailLines).map((t) => keptLine(t.raw, t.line, t.bytes, t.kind)),
			decisive,
			context: this.context,
			lines: this.count,
			nonBlank: this.nonBlank,
			kinds: { ...this.kinds },
			sampledLines: this.sampledLines,
			distinctShapes: this.shapes.size + this.shapesOverflow,
		};
	}
}
