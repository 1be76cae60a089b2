/** One SGR style: wraps text in its code and the matching reset (never a full reset, so styles nest). */
function sgr(open: number, close: number): (text: string) => string {
	return (text) => `\x1b[${open}m${text}\x1b[${close}m`;
}

/** The colours of the UI: the 16 basic ANSI colours only, so any terminal theme keeps them readable. */
export const style = {
	bold: sgr(1, 22),
	dim: sgr(2, 22),
	italic: sgr(3, 23),
	underline: sgr(4, 24),
	strike: sgr(9, 29),
	inverse: sgr(7, 27),
	red: sgr(31, 39),
	green: sgr(32, 39),
	yellow: sgr(33, 39),
	blue: sgr(34, 39),
	magenta: sgr(35, 39),
	cyan: sgr(36, 39),
	gray: sgr(90, 39),
};

/**
 * Text from a program (cell output, a model's answer) made safe to lay out: a line rewritten with
 * `\r` (a progress bar) keeps its last state, as a terminal would show it; tabs become spaces; and
 * escape sequences and other control characters are dropped, so nothing moves the cursor or
 * changes the width pi-tui measures.
 */
export function plainText(text: string): string {
	return (
		lastStates(text.replace(/\r\n/g, "\n"))
			.replace(/\t/g, "    ")
			// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what is removed.
			.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]/g, "")
	);
}

/** Each line written over with `\r` as its last non-empty text (`a\rb` is `b`; `b\r` stays `b`). */
function lastStates(text: string): string {
	if (!text.includes("\r")) return text;
	return text
		.split("\n")
		.map((line) => (line.includes("\r") ? (line.split("\r").findLast((part) => part !== "") ?? "") : line))
		.join("\n");
}
