import { exceptionOf, type LineKind, stripAnsi } from "../outcome/index.js";
import { utf8Bytes } from "./escape.js";
import type { KeptLine } from "./kept-line.js";
import { renderExcerptLine } from "./pack.js";
import { foldsByText } from "./shape.js";

/**
 * One failure's decisive lines: its message (the assertion or error line, and the lines that carry
 * it on: pytest's further `E` lines, `left:`/`right:` under a panic, jest's `Expected:`/`Received:`),
 * and the location it points at.
 */
export interface FailureMessage {
	/** The message's first line, then the lines that carry it on (at most `MESSAGE_LINES` in all). */
	message: KeptLine[];
	/**
	 * The frame the failure is at: the last of the project's (not a dependency's or the runtime's) in
	 * the lines just above the message, else the first of the project's below it.
	 */
	location: KeptLine | null;
	/** The exception type the message's first line states, when it states one. */
	type: string | null;
}

/** Examples kept at most: the first failure's, then one per distinct message. */
const MAX_EXAMPLES = 8;
/** Examples of a type seen already (or of none) kept at most, so a new type later still finds a slot. */
const MAX_VARIANTS = 3;
/** A message's lines at most, its first included. */
const MESSAGE_LINES = 4;
/** Location lines of a run remembered, the last ones: a traceback's project frame is among its last few. */
const RUN_LOCATIONS = 8;
/** Lines after a message searched for its location when none is just above it. */
const LOCATION_WINDOW = 60;

/** A line of only punctuation (`=====`, `-----`), or a heading framed by runs of it (`=== FAILURES ===`). */
const SEPARATOR = /^[^\p{L}\p{N}]*$|^[=_~*#-]{3,}|[=_~*#-]{3,}$/u;
/** A quoted source line of a code frame: `  213 |   return x`, `> 215 |`, `    |     ^`. */
const CODE_FRAME = /^\s*(?:>\s*)?(?:\d+\s*)?\|/;
/** A stack trace's heading or a runner's note after a message: the message is over. */
const TRACE_START = /^\s*(?:stack backtrace:|Traceback \(|Stack trace:|note: )/i;
/** A frame of the runtime or of a dependency, not of the project: skipped when looking below a message. */
const LIBRARY_FRAME = /node_modules[\\/]|\(node:|\bnode:internal|\/rustc\/|site-packages|<frozen |\/lib\/python\d/;
/** The message line names its own place (`panicked at src/lib.rs:10:5:`): no location line is needed. */
const OWN_LOCATION = /\S\.\w{1,10}:\d+/;
/** pytest's `E` gutter before a message. */
const E_GUTTER = /^E {2,}/;

/** Spaces before a line's text, ANSI escapes aside. */
function indentOf(raw: string): number {
	const text = stripAnsi(raw);
	return text.length - text.trimStart().length;
}

/** Builds a kept line from a line the selector fed (see `LineSelector`). */
export type KeepLine = (raw: string, lineNo: number, bytes: number, kind: LineKind) => KeptLine;

/**
 * Collects, as the lines stream by, the first failure's decisive lines and one example of each later
 * distinct message, in bounded memory. A message starts at an exception or error line (not the ones
 * carrying on the message before it), or at the first line under a failure's title after one blank
 * line, indented deeper (jest's `  ● suite › test`, then `    expect(received).toBe(expected)`). It carries on over the
 * following lines until a blank line (the second one when the message opened under a title or with a
 * line ending in `:`, whose values follow a blank), a location, a failure, summary, separator,
 * code-frame or stack-trace line, or `MESSAGE_LINES`. Messages are told apart by their shape
 * (`shapeKey`: numbers and paths aside), so 286 `assert (N % 7) != 3` make one example.
 */
export class FailureMessages {
	private readonly examples: FailureMessage[] = [];
	private readonly shapes = new Set<number>();
	private readonly types = new Set<string>();
	private variants = 0;
	/** The example whose message lines are being read, and the blank lines crossed since its last one. */
	private open: FailureMessage | null = null;
	private blanks = 0;
	/** The open message may go on past one blank line: its first line ends with `:`, or is under a title. */
	private crossing = false;
	/** The example whose location is looked for below it, up to line `seekUntil`. */
	private seeking: FailureMessage | null = null;
	private seekUntil = 0;
	/** The last location lines of the current run of non-blank lines (see `noteLocation`), and how many it had. */
	private readonly runRaw: string[] = new Array<string>(RUN_LOCATIONS).fill("");
	private readonly runLine: number[] = new Array<number>(RUN_LOCATIONS).fill(0);
	private readonly runBytes: number[] = new Array<number>(RUN_LOCATIONS).fill(0);
	private runLocations = 0;
	/** 1: the last non-blank line was a failure's title; 2: then one blank line came. */
	private afterFailure = 0;
	/** That title: a message under it is indented deeper. */
	private titleRaw = "";
	/** The last non-blank line was an exception or error line. */
	private previousMessage = false;

	/**
	 * `keep` builds a kept line of a line fed; `shapeOfLine` gives the key of the shape (`shapeKey`) of
	 * the line being fed, asked only of a line that may start a message.
	 */
	constructor(
		private readonly keep: KeepLine,
		private readonly shapeOfLine: () => number,
	) {}

	/** Feeds one line: its capped raw text, its whole size and its kind. */
	line(raw: string, lineNo: number, bytes: number, kind: LineKind): void {
		// Every example taken and none being read: nothing more to do.
		if (this.examples.length >= MAX_EXAMPLES && this.open === null && this.seeking === null) return;
		if (kind === "blank") {
			this.runLocations = 0;
			this.previousMessage = false;
			this.afterFailure = this.afterFailure === 1 ? 2 : 0;
			if (this.open && (!this.crossing || ++this.blanks > 1)) this.closeOpen();
			return;
		}
		if (this.open && this.carryOn(raw, lineNo, bytes, kind)) return;
		const message = kind === "exception" || kind === "error";
		if (this.seeking) this.seek(raw, lineNo, bytes, kind, message);
		const underTitle =
			this.afterFailure === 2 && kind === "plain" && indentOf(raw) > indentOf(this.titleRaw) && !SEPARATOR.test(raw);
		if (this.examples.length < MAX_EXAMPLES && ((message && !this.previousMessage) || underTitle)) {
			this.start(raw, lineNo, bytes, kind, underTitle);
		}
		if (kind === "location") this.noteLocation(raw, lineNo, bytes);
		this.previousMessage = message;
		this.afterFailure = 0;
		if (kind === "failure") {
			this.afterFailure = 1;
			this.runLocations = 0;
			this.titleRaw = raw;
		}
	}

	/** Remembers a location line of the current run, the last `RUN_LOCATIONS` of them (their kind is checked only when used). */
	private noteLocation(raw: string, lineNo: number, bytes: number): void {
		const at = this.runLocations % RUN_LOCATIONS;
		this.runRaw[at] = raw;
		this.runLine[at] = lineNo;
		this.runBytes[at] = bytes;
		this.runLocations++;
	}

	/** The last of the project's location lines of the current run, kept; null when there is none. */
	private runLocation(): KeptLine | null {
		const oldest = Math.max(0, this.runLocations - RUN_LOCATIONS);
		for (let i = this.runLocations - 1; i >= oldest; i--) {
			const at = i % RUN_LOCATIONS;
			if (!LIBRARY_FRAME.test(this.runRaw[at])) {
				return this.keep(this.runRaw[at], this.runLine[at], this.runBytes[at], "location");
			}
		}
		return null;
	}

	/** The examples, first-seen order. */
	finish(): FailureMessage[] {
		return this.examples;
	}

	/** Reads a line of the open message; false when the message ended before it (the line is then fed on). */
	private carryOn(raw: string, lineNo: number, bytes: number, kind: LineKind): boolean {
		const open = this.open as FailureMessage;
		if (kind === "location") {
			if (!LIBRARY_FRAME.test(raw)) open.location ??= this.keep(raw, lineNo, bytes, kind);
			this.open = null;
			return false;
		}
		const ends =
			kind === "failure" ||
			kind === "summary" ||
			kind === "progress" ||
			open.message.length >= MESSAGE_LINES ||
			SEPARATOR.test(raw) ||
			CODE_FRAME.test(raw) ||
			TRACE_START.test(raw) ||
			// A new message after a blank line is a message of its own.
			(this.blanks > 0 && (kind === "exception" || kind === "error"));
		if (ends) {
			this.closeOpen();
			return false;
		}
		open.message.push(this.keep(raw, lineNo, bytes, kind));
		this.previousMessage = kind === "exception" || kind === "error";
		this.afterFailure = 0;
		return true;
	}

	/** The open message is over: its location is looked for below it unless it has one. */
	private closeOpen(): void {
		const open = this.open as FailureMessage;
		this.open = null;
		if (open.location === null && !OWN_LOCATION.test(open.message[0].text)) {
			this.seeking = open;
			this.seekUntil = open.message[open.message.length - 1].line + LOCATION_WINDOW;
		}
	}

	private seek(raw: string, lineNo: number, bytes: number, kind: LineKind, message: boolean): void {
		const seeking = this.seeking as FailureMessage;
		if (lineNo > this.seekUntil || kind === "failure" || (message && !this.previousMessage)) {
			this.seeking = null;
		} else if (kind === "location" && !LIBRARY_FRAME.test(raw)) {
			seeking.location = this.keep(raw, lineNo, bytes, kind);
			this.seeking = null;
		}
	}

	private start(raw: string, lineNo: number, bytes: number, kind: LineKind, underTitle: boolean): void {
		const key = this.shapeOfLine();
		if (this.shapes.has(key)) return;
		const kept = this.keep(raw, lineNo, bytes, kind);
		const type = exceptionOf(kept.text.trim().replace(E_GUTTER, ""), false)?.type ?? null;
		const newType = type !== null && !this.types.has(type);
		if (!newType && this.examples.length > 0 && this.variants >= MAX_VARIANTS) return;
		if (!newType && this.examples.length > 0) this.variants++;
		if (type !== null) this.types.add(type);
		this.shapes.add(key);
		const location = this.runLocation();
		const example: FailureMessage = { message: [kept], location, type };
		this.examples.push(example);
		this.seeking = null;
		this.open = example;
		this.blanks = 0;
		this.crossing = underTitle || kept.text.trimEnd().endsWith(":");
	}
}

/** What a capsule shows of the failure messages, and the lines it shows. */
export interface FailureMessageBlock {
	/** Rendered lines (escaped, `N: text`), under their headings; empty when nothing fits. */
	lines: string[];
	/** Line numbers shown. */
	shown: Set<number>;
	/** Bytes the lines take in a capsule, newlines included. */
	bytes: number;
}

/**
 * The capsule's failure messages within `room` bytes (newlines included): `FIRST_FAILURE:` with the
 * first failure's message and location, then `OTHER_FAILURE_MESSAGES` with one example of each other
 * distinct message, those of a type not shown yet first; a message's first line the selection
 * counted (`decisive`) shows its count, as in the excerpt. Each example's lines are taken message's
 * first line, location, then the rest of the message, as far as the room allows; shown in line order.
 */
export function failureMessageBlock(
	examples: readonly FailureMessage[],
	room: number,
	maxLineBytes: number,
	decisive: readonly KeptLine[] = [],
): FailureMessageBlock {
	const shown = new Set<number>();
	// A line the selection kept as decisive says how many lines it stands for, as in the excerpt.
	const counted = new Map(decisive.map((k) => [k.line, k]));
	if (examples.length === 0) return { lines: [], shown, bytes: 0 };
	const [first, ...others] = examples;
	// Those that name a type not named before come first, then the other messages.
	const named = new Set(first.type ? [first.type] : []);
	const newTypes: FailureMessage[] = [];
	const variants: FailureMessage[] = [];
	for (const example of others) {
		if (example.type === null || named.has(example.type)) variants.push(example);
		else {
			named.add(example.type);
			newTypes.push(example);
		}
	}
	const ordered = [...newTypes, ...variants];
	let left = room;
	const take = (example: FailureMessage, heading: string | null): string[] => {
		const headingBytes = heading === null ? 0 : utf8Bytes(heading) + 1;
		const candidates = [example.message[0], example.location, ...example.message.slice(1)];
		const chosen: { line: number; text: string }[] = [];
		let budget = left - headingBytes;
		for (const kept of candidates) {
			if (kept === null || shown.has(kept.line) || chosen.some((c) => c.line === kept.line)) continue;
			// Only the message's first line: a frame's count of its shape says nothing of this failure.
			const repeats = kept === example.message[0] ? (counted.get(kept.line)?.repeats ?? 1) : 1;
			const identical = foldsByText(kept.kind);
			const entry = { line: kept.line, text: kept.text, priority: 0, bytes: kept.bytes, repeats, identical };
			const whole = renderExcerptLine(entry, maxLineBytes);
			const fits = whole !== null && utf8Bytes(whole) < budget;
			// Only the first failure's message line may be cut short to fit; a cut line says little elsewhere.
			const cut = kept === example.message[0] && example === first;
			const text = fits ? whole : cut ? renderExcerptLine(entry, budget - 1) : null;
			// An example shows its message's first line, or nothing.
			if (text === null) {
				if (chosen.length === 0) return [];
				continue;
			}
			chosen.push({ line: kept.line, text });
			budget -= utf8Bytes(text) + 1;
		}
		if (chosen.length === 0) return [];
		left = budget;
		for (const c of chosen) shown.add(c.line);
		chosen.sort((a, b) => a.line - b.line);
		return [...(heading === null ? [] : [heading]), ...chosen.map((c) => c.text)];
	};
	const lines = take(first, "FIRST_FAILURE:");
	if (lines.length === 0) return { lines, shown, bytes: 0 };
	const heading = "OTHER_FAILURE_MESSAGES (one example of each):";
	let headed = false;
	for (const example of ordered) {
		const taken = take(example, headed ? null : heading);
		if (taken.length === 0) continue;
		headed = true;
		lines.push(...taken);
	}
	return { lines, shown, bytes: room - left };
}
