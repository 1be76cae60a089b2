import { stripAnsi } from "./ansi.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped.
const CONTROLS_ALL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Control characters other than tab as `\xNN`, so a NUL or a stray escape byte is seen, not swallowed. */
export function escapeControls(text: string): string {
	return CONTROLS.test(text)
		? text.replace(CONTROLS_ALL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)
		: text;
}

/**
 * What a reader sees of one archived line, and so what capsules show and `search` matches: ANSI
 * escapes removed, the final frame of a line redrawn with carriage returns (a progress bar), other
 * control characters as `\xNN`. Invalid UTF-8 has already become U+FFFD when the line was decoded.
 */
export function visibleText(raw: string): string {
	// Most lines hold none of ESC, CSI, CR or another control character: one scan says so.
	if (!ANY_CONTROL.test(raw)) return raw;
	return escapeControls(lastFrame(stripAnsi(raw)));
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
const ANY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u009b]/;

/** The final non-empty frame of a line redrawn with carriage returns; the line itself when it has none. */
export function lastFrame(text: string): string {
	if (!text.includes("\r")) return text;
	let end = text.length;
	while (end > 0 && text.charCodeAt(end - 1) === 13) end--;
	return text.slice(text.lastIndexOf("\r", end - 1) + 1, end);
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair: a
 * clipped name or message never ends in half a character (shown as U+FFFD, or spelled as an escape
 * once serialised, it would match nothing).
 */
export function clip(text: string, max: number): string {
	if (text.length <= max) return text;
	const last = text.charCodeAt(max - 1);
	return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
