/**
 * Escaping for capsule bodies. Facts are shown exactly as the tool printed them (a model copies a
 * test id to re-run it), so `&`, `<` and `>` stay literal: the only text escaped is a literal
 * closing tag of the envelope, which would end the capsule early. Control characters other than tab
 * are not printable: they are shown as `\xNN`, the spelling `search` matches (see `visibleText`).
 */
import { escapeControls } from "../outcome/index.js";

/** The one sequence that could end a capsule early; shown as `&lt;/prime_context_output`. */
const CLOSING = "</prime_context_output";
const CLOSING_ESCAPED = "&lt;/prime_context_output";

/** Escapes one line of text for the body of a capsule (line breaks are not expected here). */
export function escapeXmlText(text: string): string {
	const visible = escapeControls(text);
	return visible.includes(CLOSING) ? visible.split(CLOSING).join(CLOSING_ESCAPED) : visible;
}

/** Escapes an attribute value (double-quoted). */
export function escapeXmlAttribute(text: string): string {
	return escapeControls(text)
		.replace(/&/g, "&amp;")
		.replace(/</g, "&lt;")
		.replace(/"/g, "&quot;")
		.replace(/>/g, "&gt;");
}

/** UTF-8 byte length of a string. */
export function utf8Bytes(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

/** Bytes a line takes in a capsule body: escaped, with its newline. */
export function capsuleLineBytes(line: string): number {
	return utf8Bytes(escapeXmlText(line)) + 1;
}

/** Bytes lines take in a capsule body (see `capsuleLineBytes`). */
export function capsuleLinesBytes(lines: readonly string[]): number {
	return lines.reduce((sum, line) => sum + capsuleLineBytes(line), 0);
}

/**
 * The longest prefix of `text` whose escaped form fits in `maxBytes`, cut only between characters
 * (never inside a surrogate pair or an escape). Returns the escaped prefix and how many UTF-8 bytes
 * of the raw text it covers.
 */
export function escapedPrefix(text: string, maxBytes: number): { escaped: string; rawBytes: number } {
	let escaped = "";
	let used = 0;
	let rawBytes = 0;
	let at = 0;
	for (const ch of text) {
		const piece = ch === "<" && text.startsWith(CLOSING, at) ? "&lt;" : escapeControls(ch);
		at += ch.length;
		const cost = utf8Bytes(piece);
		if (used + cost > maxBytes) break;
		escaped += piece;
		used += cost;
		rawBytes += utf8Bytes(ch);
	}
	return { escaped, rawBytes };
}

/** Reverses `escapeXmlText`'s envelope escape (control characters stay in their visible `\xNN` form). */
export function unescapeXmlText(text: string): string {
	return text.includes(CLOSING_ESCAPED) ? text.split(CLOSING_ESCAPED).join(CLOSING) : text;
}
