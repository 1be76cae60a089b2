import { diffArrays } from "diff";

/** A run of lines: equal in both texts, only in the later one, or only in the earlier one. */
export type Segment =
	| { kind: "same"; beforeStart: number; afterStart: number; count: number }
	| { kind: "added"; afterStart: number; count: number }
	| { kind: "removed"; beforeStart: number; count: number };

/** Lines split on `\n`; a final `\n` ends the last line rather than starting an empty one. */
export function splitLines(text: string): string[] {
	if (text === "") return [];
	const lines = text.split("\n");
	if (lines[lines.length - 1] === "") lines.pop();
	return lines;
}

/**
 * Aligns two line lists by exact equality (Myers diff). Indices are 0-based. Returns null when the
 * texts differ by more than `maxEdit` edits, which bounds the cost on unrelated inputs.
 */
export function alignLines(before: string[], after: string[], maxEdit: number): Segment[] | null {
	const changes = diffArrays(before, after, { maxEditLength: maxEdit });
	if (!changes) return null;
	const segments: Segment[] = [];
	let b = 0;
	let a = 0;
	for (const change of changes) {
		const count = change.count ?? change.value.length;
		if (change.added) {
			segments.push({ kind: "added", afterStart: a, count });
			a += count;
		} else if (change.removed) {
			segments.push({ kind: "removed", beforeStart: b, count });
			b += count;
		} else {
			segments.push({ kind: "same", beforeStart: b, afterStart: a, count });
			a += count;
			b += count;
		}
	}
	return segments;
}
