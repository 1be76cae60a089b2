/**
 * The marks that failing ids are printed under (`FAILED`, `ERROR`, `✖`, `not ok`...), counted per
 * id as the scan reads them. A capsule that cannot list every failing id gives one search per mark,
 * and a search for the mark finds the line of every id printed under it: the marks must come from
 * every id's lines, not only from the lines a capsule happened to keep (with `pytest -v`, a thousand
 * setup errors before two thousand failures fill every kept failure line with `ERROR`).
 */

/** A mark that cannot be a plain search string (a quote, a backslash, a control character). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is rejected.
export const UNSAFE_MARK = /["\\\u0000-\u001f\u007f]/;

/** Distinct marks counted, at most: a run prints its failing ids under a handful. */
const MAX_MARKS = 8;

/**
 * The mark of `id` on the (visible, trimmed) line `text`: the words before it (a section rule and a
 * trailing count aside), or a word in capitals right after it when nothing precedes it
 * (`tests/t.py::t FAILED [ 42%]`). A mark opening with a word in capitals is that word (`ERROR at
 * setup of` is searched as `ERROR`: it finds every line the longer one does, and the ids marked
 * alike). Null when the line does not hold the id or holds no usable mark: none, a numbered one
 * (`12)` names one failure, not all of them), a long one, or one that is no plain search string.
 */
export function markAround(text: string, id: string): string | null {
	// A name's own trailing spaces (kept in the id) are past the end of a trimmed line.
	const name = id.trimEnd();
	const at = name === "" ? -1 : text.indexOf(name);
	if (at < 0) return null;
	const before = text
		.slice(0, at)
		.replace(/^[\s_=-]+/, "")
		.trim()
		.replace(/\s+\d+\s*-?$/, "");
	const after = before === "" ? /^\s+([A-Z][A-Z_]{2,15})\b/.exec(text.slice(at + name.length)) : null;
	const found = after ? after[1] : before;
	const mark = /^[A-Z]{3,}\b/.exec(found)?.[0] ?? found;
	if (mark === "" || mark.length > 40 || UNSAFE_MARK.test(mark) || /\d/.test(mark)) return null;
	return mark;
}

/** A mark and how many failing ids were printed under it. */
export interface IdMark {
	mark: string;
	ids: number;
}

/**
 * Counts, per mark, the distinct failing ids printed under it. An id printed under two marks (its
 * progress line and its summary line) counts for both; printed twice under one, once. Memory is
 * bounded by the ids the caller tracks and `MAX_MARKS`.
 */
export class IdMarkCounter {
	private readonly marks: IdMark[] = [];
	/** Per id, one bit per index of `marks` it was counted under. */
	private readonly seen = new Map<string, number>();

	/** Counts `id` under the mark it has on `text`, if any. */
	note(text: string, id: string): void {
		const mark = markAround(text, id);
		if (mark === null) return;
		let index = this.marks.findIndex((entry) => entry.mark === mark);
		if (index < 0) {
			if (this.marks.length === MAX_MARKS) return;
			index = this.marks.push({ mark, ids: 0 }) - 1;
		}
		const bits = this.seen.get(id) ?? 0;
		if ((bits & (1 << index)) !== 0) return;
		this.seen.set(id, bits | (1 << index));
		this.marks[index].ids++;
	}

	/** Takes back a withdrawn id (see `ScanState.removeId`). */
	forget(id: string): void {
		const bits = this.seen.get(id);
		if (bits === undefined) return;
		this.seen.delete(id);
		for (let index = 0; index < this.marks.length; index++) if ((bits & (1 << index)) !== 0) this.marks[index].ids--;
	}

	/** Ids counted under at least one mark. */
	get markedIds(): number {
		return this.seen.size;
	}

	/** `id` was counted under some mark. */
	marked(id: string): boolean {
		return this.seen.has(id);
	}

	/** Marks with at least one id, in first-seen order. */
	list(): IdMark[] {
		return this.marks.filter((entry) => entry.ids > 0).map((entry) => ({ ...entry }));
	}
}
