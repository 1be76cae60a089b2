/**
 * CSI, OSC (ended by BEL or ST), character-set designations, two-byte escapes, and the 8-bit CSI.
 * The alternatives after ESC are grouped behind it, in the same order (the same matches): the
 * pattern then runs twice as fast on coloured lines.
 */
const ESC = "\\u001b";
const ANSI = new RegExp(
	`${ESC}(?:\\[[0-?]*[ -/]*[@-~]|\\][^\\u0007${ESC}]*(?:\\u0007|${ESC}\\\\)|[()*+][0-9A-Za-z]|[@-Z\\\\-_])|\\u009b[0-?]*[ -/]*[@-~]`,
	"g",
);

/** The text without ANSI escape sequences (CSI, OSC and two-byte escapes). Parsing only; archives keep the original. */
export function stripAnsi(text: string): string {
	if (text === plainLine || (!text.includes("\u001b") && !text.includes("\u009b"))) return text;
	// The classifier, the shape and the kept excerpt of one coloured line each ask for it in turn.
	if (text !== lastAnsi) {
		lastAnsi = text;
		lastStripped = text.replace(ANSI, "");
	}
	return lastStripped;
}

let lastAnsi = "";
let lastStripped = "";

/** Longest slice of a line that any pattern runs on, so one enormous line costs linear time and no more. */
export const LINE_SCAN_LIMIT = 4096;

/**
 * The part of a raw output line that parsing looks at: ANSI stripped, what a terminal would show after
 * carriage returns (progress redraws), bounded to `LINE_SCAN_LIMIT` characters.
 */
export function visibleLine(raw: string): string {
	// The outcome scanner and the line classifier each ask for the same line in turn.
	if (raw === lastRaw) return lastVisible;
	let text = raw.length > LINE_SCAN_LIMIT * 2 ? raw.slice(0, LINE_SCAN_LIMIT * 2) : raw;
	text = stripAnsi(text);
	// Most lines hold no carriage return: one forward search rules them out (`lastIndexOf` is slower).
	if (text.includes("\r")) {
		if (text.endsWith("\r")) text = text.replace(/\r+$/, "");
		const cr = text.lastIndexOf("\r");
		if (cr >= 0) text = text.slice(cr + 1);
	}
	return remember(raw, text);
}

/** Remembers `raw`'s visible text (cut to `LINE_SCAN_LIMIT`) for the next questions about it. */
function remember(raw: string, visible: string): string {
	lastRaw = raw;
	lastVisible = visible.length > LINE_SCAN_LIMIT ? visible.slice(0, LINE_SCAN_LIMIT) : visible;
	lastTrimmed = null;
	return lastVisible;
}

/** `visibleLine(raw).trim()`, trimmed once per line for the classifier and the outcome scanner. */
export function trimmedVisibleLine(raw: string): string {
	const visible = visibleLine(raw);
	lastTrimmed ??= visible.trim();
	return lastTrimmed;
}

let lastRaw = "";
let lastVisible = "";
/** `lastVisible` trimmed, once asked for (see `trimmedVisibleLine`). */
let lastTrimmed: string | null = null;
/** The last line `notePlain` was told of. */
let plainLine = "";

/**
 * Tells `visibleLine` and `stripAnsi` that `line` holds no escape character and no carriage return
 * (its reader searched the text it was cut from, once for many lines): asked about it next, they
 * return it as it is instead of searching it again, three to five times per line.
 */
export function notePlain(line: string): void {
	plainLine = line;
	remember(line, line);
}
