/**
 * `startsWith` and `endsWith` for the per-line rules, ruling most lines out by one character first.
 * On two-byte text (every scanned line is two-byte: see `LineSplitter`) the built-ins cost a search
 * call each, about 14 ns; a line is read by a few dozen such tests, and almost all of them fail.
 */

/** `text.startsWith(prefix)` for a non-empty `prefix`. */
export function startsWithText(text: string, prefix: string): boolean {
	return text.charCodeAt(0) === prefix.charCodeAt(0) && text.startsWith(prefix);
}

/** `text.endsWith(suffix)` for a non-empty `suffix`. */
export function endsWithText(text: string, suffix: string): boolean {
	return text.charCodeAt(text.length - 1) === suffix.charCodeAt(suffix.length - 1) && text.endsWith(suffix);
}
