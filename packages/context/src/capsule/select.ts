import {
	classifyLine,
	clip,
	DiffReader,
	type Keep,
	keeper,
	type LineKind,
	type LineMemo,
	LineTable,
	lastFrame,
	lineSlot,
	normalizeEvidence,
	stripAnsi,
	visibleLine,
} from "../outcome/index.js";
import { type FailureMessage, FailureMessages } from "./failure-messages.js";
import type { KeptLine } from "./kept-line.js";
import { foldKey, foldsByText, shapeKey } from "./shape.js";

export type { KeptLine } from "./kept-line.js";

export interface Selection {
	head: KeptLine[];
	tail: KeptLine[];
	/** Decisive lines (summary, failure, exception, error, location, warning), one per fold key (`foldKey`), with counts. */
	decisive: KeptLine[];
	/** Lines just before and after decisive failure, exception and error lines. */
	context: KeptLine[];
	/** The first failure's message and location, then one example of each other distinct message (`FailureMessages`). */
	messages: FailureMessage[];
	lines: number;
	nonBlank: number;
	kinds: Record<LineKind, number>;
	/** Non-blank lines whose shape was tracked: all of the first `shapeAllLines`, then one in 8. */
	sampledLines: number;
	/** Distinct line shapes among the sampled lines (saturates at the tracking bound). */
	distinctShapes: number;
	/**
	 * Every failure, exception, error and location line in order (see `normalizeEvidence`), one per
	 * text line, and every line of a diff's hunks (what a diff shows is part of what a run did, not
	 * wrapper text); null when they exceed `evidenceBytes`. Outcome deltas compare it: an outcome is
	 * "unchanged" only when this evidence is too.
	 */
	evidence: string | null;
}

/** Kinds whose lines are the evidence an outcome delta may only drop when unchanged. */
export const EVIDENCE_KINDS: ReadonlySet<LineKind> = new Set(["failure", "exception", "error", "location"]);

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
	/** Bytes of evidence text kept for outcome comparison; past it, none is kept. */
	evidenceBytes: number;
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
	evidenceBytes: 4096,
};

/** Lines up to this long have their kind and shape remembered, in this many slots: a repeated line is worked out once. */
const REMEMBERED_CHARS = 200;

/** What the selector does with the lines of a kind, looked up once per remembered line, not per line. */
interface KindRole {
	/** Where the kind is counted (see `LINE_KINDS`). */
	index: number;
	evidence: boolean;
	decisive: boolean;
}

/** Every kind once (a record, so the compiler checks none is missing), in the order `kinds` lists them. */
const KIND_ORDER: Record<LineKind, null> = {
	summary: null,
	failure: null,
	exception: null,
	location: null,
	error: null,
	warning: null,
	trace: null,
	progress: null,
	"usage-option": null,
	bullet: null,
	blank: null,
	plain: null,
};
const LINE_KINDS = Object.keys(KIND_ORDER) as LineKind[];
const ROLES: ReadonlyMap<LineKind, KindRole> = new Map(
	LINE_KINDS.map((kind, index) => [kind, { index, evidence: EVIDENCE_KINDS.has(kind), decisive: DECISIVE.has(kind) }]),
);
const roleOf = (kind: LineKind): KindRole => ROLES.get(kind) as KindRole;

/**
 * What the selector works out from a line's text alone: its kind (and role), and its shape's key once
 * asked for (`shapeKey`); the outcome scanner's note on the same text is kept with them (`LineMemo`).
 */
interface LineFacts extends LineMemo {
	kind: LineKind;
	role: KindRole;
	shape: number | null;
}

/** Past `shapeAllLines`, one non-blank line in this many is shaped for the repetition estimate. */
const SHAPE_SAMPLE_EVERY = 8;

/** Builds a kept line: ANSI removed for display; bytes count what is shown (escapes removed from the kept part are not). */
function keptLine(line: string, lineNo: number, bytes: number, kind: LineKind, keep: Keep): KeptLine {
	const raw = keep(line);
	const text = lastFrame(stripAnsi(raw));
	const whole = bytes >= 0 ? bytes : Buffer.byteLength(raw);
	const hidden = text.length === raw.length ? 0 : Buffer.byteLength(raw) - Buffer.byteLength(text);
	return { line: lineNo, text, raw, bytes: whole - hidden, kind, repeats: 1 };
}

/**
 * The last lines seen, in a fixed ring: a line costs four slot writes, and a `KeptLine` is built
 * only for the lines still there at the end.
 */
class TailRing {
	private readonly raw: string[];
	private readonly line: number[];
	private readonly bytes: number[];
	private readonly kind: LineKind[];
	private next = 0;
	private filled = 0;

	constructor(private readonly size: number) {
		this.raw = new Array<string>(size).fill("");
		this.line = new Array<number>(size).fill(0);
		this.bytes = new Array<number>(size).fill(0);
		this.kind = new Array<LineKind>(size).fill("blank");
	}

	push(raw: string, line: number, bytes: number, kind: LineKind): void {
		if (this.size === 0) return;
		const at = this.next;
		this.raw[at] = raw;
		this.line[at] = line;
		this.bytes[at] = bytes;
		this.kind[at] = kind;
		this.next = at + 1 === this.size ? 0 : at + 1;
		if (this.filled < this.size) this.filled++;
	}

	/** The held lines, oldest first. */
	lines(): KeptLine[] {
		const out: KeptLine[] = [];
		for (let i = 0; i < this.filled; i++) {
			const at = (this.next - this.filled + i + this.size) % this.size;
			// Built once the scan is over, from a few neighbouring lines: nothing to copy.
			out.push(keptLine(this.raw[at], this.line[at], this.bytes[at], this.kind[at], keeper(false)));
		}
		return out;
	}
}

/**
 * Keeps, in bounded memory whatever the output's size, what a capsule can be built from: the head,
 * the tail, and the decisive lines with their original line numbers. Decisive lines of a shape
 * already kept only raise that line's count.
 *
 * Most lines are only classified and counted: a line's ANSI-free text and shape are computed only
 * when its shape is tracked or it may be kept, and a `KeptLine` exists only for lines that are kept.
 */
export class LineSelector {
	private readonly head: KeptLine[] = [];
	private readonly tail: TailRing;
	private readonly decisive: KeptLine[] = [];
	private readonly lastSummary: KeptLine[] = [];
	private readonly context: KeptLine[] = [];
	private readonly messages = new FailureMessages(
		(raw, lineNo, bytes, kind) => keptLine(raw, lineNo, bytes, kind, this.own),
		() => this.shapeOf(this.currentFacts, this.currentLine),
	);
	/** The line being fed and its facts, for `messages` to ask its shape of (remembered with the facts). */
	private currentFacts: LineFacts = { kind: "plain", role: roleOf("plain"), shape: null, scan: 0 };
	private currentLine = "";
	/** Per kind, the kept line of each fold key: a shape's key, or the text for evidence kinds (`foldKey`). */
	private readonly decisiveByShape = new Map<LineKind, Map<string | number, KeptLine>>();
	private readonly perKind = new Map<LineKind, number>();
	/** Keys of the distinct shapes seen (`shapeKey`): numbers, which hold no text alive. */
	private readonly shapes = new Set<number>();
	/** Facts of recent short lines, one per slot (see `lineSlot`): a repeated line's kind and shape. */
	private readonly known = new LineTable<LineFacts>();
	/** Facts of the current long line (never remembered). */
	private readonly longLine: LineFacts = { kind: "plain", role: roleOf("plain"), shape: null, scan: 0 };
	/** Facts of the current line quoted inside a diff hunk (never classified: see `DiffReader`). */
	private readonly quotedLine: LineFacts = { kind: "plain", role: roleOf("plain"), shape: null, scan: 0 };
	private readonly diff = new DiffReader();
	/** The current line is a diff hunk's header or one of its lines (see `DiffReader`). */
	private inDiff = false;
	/** Applied to what is kept past its line (see `keeper`). */
	private readonly own: Keep;
	private shapesOverflow = 0;
	/** The last non-blank line (line 0: none yet); its `KeptLine` when one was built for it. */
	private previousRaw = "";
	private previousLine = 0;
	/** Whole-line bytes, or -1 when not measured (see `keptLine`). */
	private previousBytes = -1;
	private previousKind: LineKind = "blank";
	private previousKept: KeptLine | null = null;
	private sampledLines = 0;
	private evidence: string[] | null = [];
	private evidenceSize = 0;
	private wantAfter = false;
	/** The line wanted after (`wantAfter`) follows an evidence line folded into an identical one. */
	private afterFold = false;
	/** Trimmed texts of the lines kept after evidence lines: after a folded one, each is kept once. */
	private readonly afterTexts = new Set<string>();
	private count = 0;
	private nonBlank = 0;
	/** Lines of each kind, by `KindRole.index`. */
	private readonly kindCounts: number[] = LINE_KINDS.map(() => 0);

	/**
	 * `copyKept`: what is kept past its line (kept lines, shapes, fold keys, evidence) is copied off the
	 * text it was cut from (see `ownCopy`); needless when the caller holds the whole text anyway.
	 */
	constructor(
		private readonly limits: SelectorLimits = DEFAULT_SELECTOR_LIMITS,
		copyKept = true,
	) {
		this.own = keeper(copyKept);
		this.tail = new TailRing(Math.max(0, limits.tailLines));
	}

	/**
	 * Where the outcome scanner keeps its note on the text of the line just fed, remembered with the
	 * line's facts (null when that text is not remembered): one lookup per line serves both.
	 */
	memo: LineMemo | null = null;

	/** Feeds one line (without its newline). `bytes` is the whole line's size when `raw` is capped. Returns its kind. */
	line(raw: string, lineNo: number, bytes?: number): LineKind {
		const limits = this.limits;
		const capped = raw.length > limits.lineChars ? clip(raw, limits.lineChars) : raw;
		const facts = this.facts(raw, capped);
		this.memo = facts === this.longLine || facts === this.quotedLine ? null : facts;
		const kind = facts.kind;
		const whole = bytes ?? Buffer.byteLength(raw);
		this.count = lineNo;
		const role = facts.role;
		this.kindCounts[role.index]++;
		if ((role.evidence || this.inDiff) && this.evidence !== null) this.addEvidence(capped, this.inDiff);
		this.tail.push(capped, lineNo, whole, kind);
		const blank = kind === "blank";
		if (!blank) this.nonBlank++;
		const decisive = role.decisive;
		// Repetition is estimated from every line up to a bound, then from a regular sample.
		const sampled = !blank && (this.nonBlank <= limits.shapeAllLines || this.nonBlank % SHAPE_SAMPLE_EVERY === 0);
		const wantAfter = this.wantAfter && !blank && this.context.length < limits.contextLines;
		const inHead = this.head.length < limits.headLines;
		// A summary is kept whatever its shape, and a line folded by its text needs its shape only if it is
		// kept (`keepDecisive`): most failure lines are repeats or past the bound, and skip the work.
		let shape = 0;
		if (sampled || (decisive && kind !== "summary" && !foldsByText(kind))) shape = this.shapeOf(facts, capped);
		if (sampled) {
			this.sampledLines++;
			this.trackShape(shape);
		}
		let kept: KeptLine | null = null;
		if (inHead || (wantAfter && !decisive)) {
			kept = keptLine(capped, lineNo, whole, kind, this.own);
			if (inHead) this.head.push(kept);
		}
		if (wantAfter) {
			if (!decisive) this.keepAfter(kept as KeptLine);
			this.wantAfter = false;
		}
		if (decisive) kept = this.keepDecisive(capped, lineNo, whole, kind, facts, kept);
		this.currentFacts = facts;
		this.currentLine = capped;
		this.messages.line(capped, lineNo, whole, kind);
		if (blank) return kind;
		this.previousRaw = capped;
		this.previousLine = lineNo;
		this.previousKind = kind;
		this.previousKept = kept;
		// A line nobody looked at keeps its size unmeasured when none was given, as `keptLine` expects.
		this.previousBytes = kept || sampled ? whole : (bytes ?? -1);
		return kind;
	}

	/**
	 * `classifyLine` and the shape, remembered for repeated short lines (blank, indentation, docstring
	 * quotes, `E` lines, the frames of repeated stack traces...). A line a diff hunk quotes, and its
	 * header, are a file's text, not output of this run: plain (or blank), whatever they say, as the
	 * outcome scanner reads them.
	 */
	private facts(raw: string, line: string): LineFacts {
		const visible = visibleLine(raw);
		const diff = this.diff.read(visible);
		this.inDiff = diff !== "other";
		// A hunk's header is the diff's too: the text after its `@@` is a line of the file, as git quotes it.
		if (this.inDiff) {
			const kind = visible.trim() === "" ? "blank" : "plain";
			this.quotedLine.kind = kind;
			this.quotedLine.role = roleOf(kind);
			this.quotedLine.shape = null;
			return this.quotedLine;
		}
		if (line.length > REMEMBERED_CHARS) {
			const kind = classifyLine(line);
			this.longLine.kind = kind;
			this.longLine.role = roleOf(kind);
			this.longLine.shape = null;
			return this.longLine;
		}
		const slot = lineSlot(line);
		let facts = this.known.get(line, slot);
		if (facts === undefined) {
			const kind = classifyLine(line);
			facts = { kind, role: roleOf(kind), shape: null, scan: 0 };
			this.known.set(line, slot, facts);
		}
		return facts;
	}

	/** The key of the line's shape, worked out once per remembered line. */
	private shapeOf(facts: LineFacts, capped: string): number {
		facts.shape ??= shapeKey(stripAnsi(capped));
		return facts.shape;
	}

	private trackShape(shape: number): void {
		if (this.shapes.has(shape)) return;
		if (this.shapes.size < this.limits.shapes) this.shapes.add(shape);
		else this.shapesOverflow++;
	}

	/** Counts or keeps a decisive line; returns its `KeptLine` when one exists (built only when it is kept). */
	private keepDecisive(
		raw: string,
		lineNo: number,
		bytes: number,
		kind: LineKind,
		facts: LineFacts,
		built: KeptLine | null,
	): KeptLine | null {
		if (kind === "summary") {
			const kept = built ?? keptLine(raw, lineNo, bytes, kind, this.own);
			this.lastSummary.push(kept);
			if (this.lastSummary.length > this.limits.lastSummaries) this.lastSummary.shift();
			return kept;
		}
		let byShape = this.decisiveByShape.get(kind);
		if (byShape === undefined) {
			byShape = new Map();
			this.decisiveByShape.set(kind, byShape);
		}
		const byText = foldsByText(kind);
		const key = byText ? foldKey(kind, raw) : this.shapeOf(facts, raw);
		const same = byShape.get(key);
		if (same) {
			same.repeats++;
			// The line after says what differs (an assertion's values, a message's second line).
			if (WITH_CONTEXT.has(kind) && byText && this.context.length < this.limits.contextLines) {
				this.wantAfter = true;
				this.afterFold = true;
			}
			return built;
		}
		const used = this.perKind.get(kind) ?? 0;
		if (used >= this.limits.perKind) return built;
		const kept = built ?? keptLine(raw, lineNo, bytes, kind, this.own);
		this.perKind.set(kind, used + 1);
		if (byText) {
			const shape = this.shapeOf(facts, raw);
			// Kept by its text: remember whether its shape is new, so the first of each shape leads the excerpt.
			if (byShape.has(shape)) kept.shapeSeen = true;
			else byShape.set(shape, kept);
		}
		byShape.set(typeof key === "string" ? this.own(key) : key, kept);
		this.decisive.push(kept);
		if (WITH_CONTEXT.has(kind) && this.context.length < this.limits.contextLines) {
			if (this.previousLine === lineNo - 1 && this.previousLine > 0 && !DECISIVE.has(this.previousKind)) {
				this.context.push(
					this.previousKept ??
						keptLine(this.previousRaw, this.previousLine, this.previousBytes, this.previousKind, this.own),
				);
			}
			this.wantAfter = true;
			this.afterFold = false;
		}
		return kept;
	}

	/**
	 * Keeps the line after an evidence line; after one folded into an identical line, only when no line
	 * of the same text (indentation aside) was kept after another: it would say nothing new.
	 */
	private keepAfter(kept: KeptLine): void {
		const text = kept.text.trim();
		if (this.afterFold) {
			if (this.afterTexts.has(text)) return;
			kept.afterFold = true;
		}
		this.afterTexts.add(this.own(text));
		this.context.push(kept);
	}

	/** `quoted`: a diff's line, a file's text compared exactly (a `5s` in it is no duration of this run). */
	private addEvidence(raw: string, quoted: boolean): void {
		const visible = lastFrame(stripAnsi(raw));
		const text = quoted ? visible : normalizeEvidence(visible);
		this.evidenceSize += text.length + 1;
		if (this.evidenceSize > this.limits.evidenceBytes) this.evidence = null;
		else this.evidence?.push(this.own(text));
	}

	finish(): Selection {
		const decisive = [...this.decisive, ...this.lastSummary].sort((a, b) => a.line - b.line);
		return {
			head: this.head,
			tail: this.tail.lines(),
			decisive,
			context: this.context,
			messages: this.messages.finish(),
			lines: this.count,
			nonBlank: this.nonBlank,
			kinds: Object.fromEntries(LINE_KINDS.map((kind, i) => [kind, this.kindCounts[i]])) as Record<LineKind, number>,
			sampledLines: this.sampledLines,
			distinctShapes: this.shapes.size + this.shapesOverflow,
			evidence: this.evidence === null ? null : this.evidence.join("\n"),
		};
	}
}
