/**
 * XML text escaping for capsule bodies. Only `&` and `<` are escaped: that is all XML text content
 * needs, and it keeps `>` readable so ids such as `file > describe > test` stay literal.
 * C0 control characters other than tab (never valid in XML 1.0) become U+FFFD.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
const NEEDS_ESCAPE = /[&<\u0000-\u0008\u000b-\u001f\u007f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
const ESCAPES = /[&<\u0000-\u0008\u000b-\u001f\u007f]/g;

function escapeChar(ch: string): string {
	if (ch === "&") return "&amp;";
	if (ch === "<") return "&lt;";
	return "\uFFFD";
}

/** Escapes one line of text for the body of a capsule (line breaks are not expected here). */
export function escapeXmlText(text: string): string {
	return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPES, escapeChar) : text;
}

/** Escapes an attribute value (double-quoted). */
export function escapeXmlAttribute(text: string): string {
	return escapeXmlText(text).replace(/"/g, "&quot;").replace(/>/g, "&gt;");
}

/** UTF-8 byte length of a string. */
export function utf8Bytes(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

/**
 * The longest prefix of `text` whose escaped form fits in `maxBytes`, cut only between characters
 * (never inside a surrogate pair or an entity). Returns the escaped prefix and how many UTF-8 bytes
 * of the raw text it covers.
 */
export function escapedPrefix(text: string, maxBytes: number): { escaped: string; rawBytes: number } {
	let escaped = "";
	let used = 0;
	let rawBytes = 0;
	for (const ch of text) {
		const piece = escapeXmlText(ch);
		const cost = utf8Bytes(piece);
		if (used + cost > maxBytes) break;
		escaped += piece;
		used += cost;
		rawBytes += utf8Bytes(ch);
	}
	return { escaped, rawBytes };
}

/** Reverses `escapeXmlText` (for readers of capsules, e.g. checks that an id is shown literally). */
export function unescapeXmlText(text: string): string {
	return text
		.replace(/&lt;/g, "<")
		.replace(/&quot;/g, '"')
		.replace(/&gt;/g, ">")
		.replace(/&amp;/g, "&");
}
