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
	/** Distinct line shapes among non-blank lines (saturates at the tracking bound). */
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
}

export const DEFAULT_SELECTOR_LIMITS: SelectorLimits = {
	headLines: 30,
	tailLines: 30,
	perKind: 150,
	lastSummaries: 16,
	contextLines: 200,
	lineChars: 1024,
	shapes: 20_000,
};

/**
 * Keeps, in bounded memory whatever the output's size, what a capsule can be built from: the head,
 * the tail, and the decisive lines with their original line numbers. Decisive lines of a shape
 * already kept only raise that line's count.
 */
export class LineSelector {
	private readonly head: KeptLine[] = [];
	private tail: KeptLine[] = [];
	private readonly decisive: KeptLine[] = [];
	private readonly lastSummary: KeptLine[] = [];
	private readonly context: KeptLine[] = [];
	private readonly decisiveByShape = new Map<string, KeptLine>();
	private readonly perKind = new Map<LineKind, number>();
	private readonly shapes = new Set<string>();
	private shapesOverflow = 0;
	private previous: KeptLine | null = null;
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
		const text = stripAnsi(capped).replace(/\r$/, "");
		const kind = classifyLine(text);
		this.count = lineNo;
		this.kinds[kind]++;
		const kept: KeptLine = {
			line: lineNo,
			text,
			raw: capped,
			// Bytes of the line as shown: ANSI escapes removed from the kept part are not shown either.
			bytes:
				(bytes ?? Buffer.byteLength(raw)) -
				(text.length === capped.length ? 0 : Buffer.byteLength(capped) - Buffer.byteLength(text)),
			kind,
			repeats: 1,
		};
		if (kind !== "blank") this.nonBlank++;
		const shape = kind === "blank" ? "" : lineShape(text);
		if (kind !== "blank") this.trackShape(shape);

		if (this.head.length < this.limits.headLines) this.head.push(kept);
		this.tail.push(kept);
		if (this.tail.length > this.limits.tailLines * 2) this.tail = this.tail.slice(-this.limits.tailLines);

		if (this.wantAfter && kind !== "blank" && this.context.length < this.limits.contextLines) {
			if (!DECISIVE.has(kind)) this.context.push(kept);
			this.wantAfter = false;
		}
		if (DECISIVE.has(kind)) this.keepDecisive(kept, shape);
		if (kind !== "blank") this.previous = kept;
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
			if (before && before.line === kept.line - 1 && !DECISIVE.has(before.kind)) this.context.push(before);
			this.wantAfter = true;
		}
	}

	finish(): Selection {
		const decisive = [...this.decisive, ...this.lastSummary].sort((a, b) => a.line - b.line);
		return {
			head: this.head,
			tail: this.tail.slice(-this.limits.tailLines),
			decisive,
			context: this.context,
			lines: this.count,
			nonBlank: this.nonBlank,
			kinds: { ...this.kinds },
			distinctShapes: this.shapes.size + this.shapesOverflow,
		};
	}
}
