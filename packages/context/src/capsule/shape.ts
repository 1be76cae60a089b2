import type { LineKind } from "../outcome/index.js";

/** Lines longer than this are shaped by their first characters only. */
const SHAPE_CHARS = 240;

const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 12 || c === 11;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isWordChar = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

/** One word (letters, digits, `_`): hex literals and long hex ids become `#`, digit runs `0`. */
function shapeWord(text: string, start: number, end: number): string {
	let hasDigit = false;
	let allHex = true;
	for (let i = start; i < end; i++) {
		const c = text.charCodeAt(i);
		if (isDigit(c)) hasDigit = true;
		else if (!isHex(c)) allHex = false;
	}
	if (!hasDigit) return text.slice(start, end);
	if (end - start > 2 && text.charCodeAt(start) === 48 && (text.charCodeAt(start + 1) | 32) === 120) return "#";
	if (allHex && end - start >= 7) return "#";
	let out = "";
	let i = start;
	while (i < end) {
		if (isDigit(text.charCodeAt(i))) {
			while (i < end && isDigit(text.charCodeAt(i))) i++;
			out += "0";
		} else out += text[i++];
	}
	return out;
}

function nextSeparator(text: string, from: number, n: number): number {
	for (let i = from; i < n; i++) {
		const c = text.charCodeAt(i);
		if (c === 47 || c === 92) return i;
	}
	return n;
}

/**
 * The shape of a line: what stays when the parts that vary between otherwise repeated lines are
 * normalised: runs of space become one space, tokens holding a path separator become `/P`, hex
 * literals and long hex ids `#`, numbers `0`. Lines of one shape are shown once in an excerpt, with
 * a count. A single pass over at most 240 characters (this runs on every line of every output).
 */
export function lineShape(text: string): string {
	const t = text.trim();
	const n = Math.min(t.length, SHAPE_CHARS);
	let out = "";
	// Text from here to the current position is copied unchanged, in one slice, when the next change comes.
	let verbatim = 0;
	let i = 0;
	// Next path separator at or after i (n when none): found once per separator, not once per token.
	let separator = -1;
	while (i < n) {
		if (isSpace(t.charCodeAt(i))) {
			const run = i;
			while (i < n && isSpace(t.charCodeAt(i))) i++;
			// A single plain space is its own shape; any other run becomes one.
			if (i - run !== 1 || t.charCodeAt(run) !== 32) {
				out += `${t.slice(verbatim, run)} `;
				verbatim = i;
			}
			continue;
		}
		let end = i;
		while (end < n && !isSpace(t.charCodeAt(end))) end++;
		if (separator < i) separator = nextSeparator(t, i, n);
		if (separator < end) {
			out += `${t.slice(verbatim, i)}/P`;
			verbatim = end;
			i = end;
			continue;
		}
		// Words holding digits are shaped; everything else stays as it is.
		while (i < end) {
			if (!isWordChar(t.charCodeAt(i))) {
				i++;
				continue;
			}
			let w = i;
			let digit = false;
			while (w < end && isWordChar(t.charCodeAt(w))) {
				if (isDigit(t.charCodeAt(w))) digit = true;
				w++;
			}
			if (digit) {
				out += t.slice(verbatim, i) + shapeWord(t, i, w);
				verbatim = w;
			}
			i = w;
		}
	}
	return verbatim === 0 ? (n === t.length ? t : t.slice(0, n)) : out + t.slice(verbatim, n);
}

/** The two lanes of a shape key, seeded; each character is mixed into both (`mixA`, `mixB`). */
const SEED_A = 0x811c9dc5 | 0;
const SEED_B = 0x2545f491 | 0;
const mixA = (h: number, c: number) => Math.imul(h ^ c, 0x01000193);
const mixB = (h: number, c: number) => {
	const m = Math.imul(h ^ c, 0x5bd1e995);
	return m ^ (m >>> 13);
};
/** 53 bits from the two lanes: a number that is exact as a double. */
const keyOf = (a: number, b: number) => (a >>> 0) * 0x200000 + (b >>> 11);

/** The key of a shape given as text: its characters mixed in order (see `shapeKey`). */
export function keyOfShape(shape: string): number {
	let a = SEED_A;
	let b = SEED_B;
	for (let i = 0; i < shape.length; i++) {
		const c = shape.charCodeAt(i);
		a = mixA(a, c);
		b = mixB(b, c);
	}
	return keyOf(a, b);
}

/** What `shapeKey` asks of an ASCII character, one table read instead of a chain of comparisons. */
const SPACE = 1;
const DIGIT = 2;
const WORD = 4;
const HEX = 8;
const SEPARATOR = 16;
const ASCII_CLASS = (() => {
	const table = new Uint8Array(128);
	for (const c of [32, 9, 13, 12, 11]) table[c] = SPACE;
	for (let c = 48; c <= 57; c++) table[c] = DIGIT | WORD | HEX;
	for (let c = 65; c <= 90; c++) table[c] = WORD | (c <= 70 ? HEX : 0);
	for (let c = 97; c <= 122; c++) table[c] = WORD | (c <= 102 ? HEX : 0);
	table[95] = WORD;
	table[47] = SEPARATOR;
	table[92] = SEPARATOR;
	return table;
})();
/** The `isSpace`, `isDigit`, `isWordChar`, `isHex` and path-separator answers for `c` as bits (none past ASCII). */
const classOf = (c: number): number => (c < 128 ? ASCII_CLASS[c] : 0);

/**
 * `keyOfShape(lineShape(text))`, worked out in one pass without building the shape: the characters
 * the shape would have are mixed in as they are found (a word's or a path token's characters are
 * taken back, by restoring the lanes, when the whole turns out to be `#` or `/P`). Lines of one
 * shape get one key; two shapes share a key with a chance of about 2^-53 per pair, so a count of
 * distinct keys over the 20,000 tracked shapes is off with a chance of about 2 in 100 million.
 * Faster than `lineShape`, and a number is cheaper to hash than a joined string. Each character's
 * class is read once from a table: 1.0 us a line of real output, where a chain of comparisons per
 * character (as `lineShape` makes) took 1.5.
 */
export function shapeKey(text: string): number {
	const t = text.trim();
	const n = Math.min(t.length, SHAPE_CHARS);
	let a = SEED_A;
	let b = SEED_B;
	let i = 0;
	while (i < n) {
		let c = t.charCodeAt(i);
		let k = classOf(c);
		if ((k & SPACE) !== 0) {
			do i++;
			while (i < n && (classOf(t.charCodeAt(i)) & SPACE) !== 0);
			a = mixA(a, 32);
			b = mixB(b, 32);
			continue;
		}
		// A token, up to the next space (`c` and `k` are its character at `i`): one holding a path
		// separator is `/P` as a whole.
		const tokenA = a;
		const tokenB = b;
		let path = false;
		for (;;) {
			if ((k & WORD) === 0) {
				if ((k & SEPARATOR) !== 0) path = true;
				a = mixA(a, c);
				b = mixB(b, c);
				i++;
			} else {
				// A word: each digit run is `0`; a hex literal or a long hex id with a digit is `#`.
				const start = i;
				const wordA = a;
				const wordB = b;
				let digit = false;
				let allHex = true;
				let inDigits = false;
				do {
					if ((k & DIGIT) !== 0) {
						digit = true;
						if (!inDigits) {
							a = mixA(a, 48);
							b = mixB(b, 48);
							inDigits = true;
						}
					} else {
						if ((k & HEX) === 0) allHex = false;
						inDigits = false;
						a = mixA(a, c);
						b = mixB(b, c);
					}
					if (++i >= n) break;
					c = t.charCodeAt(i);
					k = classOf(c);
				} while ((k & WORD) !== 0);
				const length = i - start;
				const hexLiteral = length > 2 && t.charCodeAt(start) === 48 && (t.charCodeAt(start + 1) | 32) === 120;
				if (digit && (hexLiteral || (allHex && length >= 7))) {
					a = mixA(wordA, 35);
					b = mixB(wordB, 35);
				}
				// The word ended at a space, the end, or another character of the token (`c`, `k`).
				if (i >= n || (k & SPACE) !== 0) break;
				continue;
			}
			if (i >= n) break;
			c = t.charCodeAt(i);
			k = classOf(c);
			if ((k & SPACE) !== 0) break;
		}
		if (path) {
			a = mixA(mixA(tokenA, 47), 80);
			b = mixB(mixB(tokenB, 47), 80);
		}
	}
	return keyOf(a, b);
}

/**
 * Kinds whose lines are evidence, never noise: each distinct line names a failing test or states an
 * exception, so such lines are folded only when their text is identical, never by shape.
 */
const NEVER_FOLDED_BY_SHAPE: ReadonlySet<LineKind> = new Set(["failure", "exception"]);

/** Lines of this kind are folded only when identical. */
export function foldsByText(kind: LineKind | undefined): boolean {
	return kind !== undefined && NEVER_FOLDED_BY_SHAPE.has(kind);
}

/**
 * What lines are folded by: their text for evidence kinds, else their shape's key (`shapeKey`). A
 * text is a string and a shape's key a number, so the two never meet in one map or set.
 */
export function foldKey(kind: LineKind | undefined, text: string): string | number {
	return foldsByText(kind) ? text : shapeKey(text);
}
