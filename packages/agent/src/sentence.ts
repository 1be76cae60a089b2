/**
 * Messages a user or the model reads are often built around text from elsewhere: a provider's
 * error ("Connection error."), a kernel's or a server's reason. Such text may or may not end with
 * its own full stop; `endSentence` puts it before the next sentence with exactly one.
 */

/** Ends with `.`, `!`, `?` or `…`, maybe inside closing quotes or brackets ("it said 'no.'"). */
const ENDED = /[.!?…]["'”’)\]]*$/u;

/** `text` (trailing space removed) ending with one full stop: its own stop is kept, none is doubled. */
export function endSentence(text: string): string {
	const trimmed = text.trimEnd();
	return ENDED.test(trimmed) ? trimmed : `${trimmed}.`;
}
