/**
 * Declarations a user message makes about staged work. Only the very start of the complete message
 * counts: the same words quoted (`"REQUIREMENTS LOCKED"`, `> ...`, in backticks), inside a sentence,
 * or on a later line never declare anything.
 */

/** Markdown a person may open a declaration with: a heading mark or bold. Quotes are not allowed. */
const OPENING = String.raw`^\s*(?:#{1,6}[ \t]+)?(?:\*\*|__)?`;
const CLOSING = String.raw`(?:\*\*|__)?`;
/** The declaration stands alone: the message or line ends, or punctuation follows (never `?`). */
const STANDS_ALONE = String.raw`(?=[ \t]*(?:$|\r?\n|[.:!;,)]|-|\u2013|\u2014))`;

const LOCK = new RegExp(`${OPENING}requirements[ \\t]+(?:are[ \\t]+)?locked${CLOSING}${STANDS_ALONE}`, "i");
const STAGE = new RegExp(`${OPENING}(?:requirements[ \\t]+)?stage[ \\t]+\\d+\\b${CLOSING}(?![ \\t]*\\?)`, "i");

/**
 * The message locks the requirements: it begins with `REQUIREMENTS LOCKED` (or `REQUIREMENTS ARE
 * LOCKED`; any case; optionally as a Markdown heading or in bold), standing alone: followed by the
 * end of the message or line, or by punctuation (`.`, `:`, `!`, `;`, `,`, `-`, a dash), never `?`.
 */
export function declaresLock(text: string): boolean {
	return LOCK.test(text);
}

/** The message opens a stage: it begins with `STAGE <n>` (or `REQUIREMENTS STAGE <n>`), any case. */
export function declaresStage(text: string): boolean {
	return STAGE.test(text);
}

/**
 * The message is only a lock declaration, with no further requirement text, so the requirements
 * themselves did not change (the revision does not advance).
 */
export function isBareLock(text: string): boolean {
	const match = LOCK.exec(text);
	if (!match) return false;
	return /^[\s.:!;,)\-\u2013\u2014*_]*$/.test(text.slice(match[0].length));
}
