import type { ScanState } from "./state.js";

/** The new file's path: up to a tab (git ends a path holding a space with one; `diff -u` puts a date after it). */
const DIFF_TARGET = /^\+\+\+ (?:b\/)?([^\t]+)/;
const DIFF_HUNK = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
/** A combined diff's hunk (`git show` of a merge): one `-a,b` per parent, one more `@` than parents. */
const COMBINED_HUNK = /^(@{3,}) ((?:-\d+(?:,\d+)? )+)\+(\d+)(?:,(\d+))? \1/;
const PARENT_RANGE = /-\d+(?:,(\d+))? /g;

/** What one line of an output is to a unified diff read in order (see `DiffReader`). */
export type DiffLine = "quoted" | "hunk" | "other";

/**
 * Follows the hunks of unified diffs through an output, line by line (visible text, ANSI removed).
 * A hunk header (`@@ -a,b +c,d @@`) says how many old and new lines follow; those lines (` `, `-`,
 * `+`, an empty line as an empty context line, and `\ No newline at end of file`) are quoted
 * content, never lines of this run: a `+    raise ValueError(...)` is a file's text, not an error.
 * Counting them ends the hunk exactly where the diff says, so output after a diff (a test run in the
 * same command) is read as output, and a removed `-- comment` line (`--- comment`) stays content.
 * A combined diff (`@@@ -a,b -c,d +e,f @@@`, `git show` of a merge) is counted per parent alike.
 */
export class DiffReader {
	/** Old and new lines of the current hunk still to come (a context line counts on both sides). */
	private oldLeft = 0;
	private newLeft = 0;
	/** Inside a hunk: its lines, then any `\` note after its last line. */
	private inHunk = false;
	/** In a combined diff's hunk, each parent's lines still to come (null: a unified diff's hunk). */
	private parentsLeft: number[] | null = null;
	/** The first new line of the hunk whose header was read last. */
	newStart = 0;
	/** How many new lines that hunk holds (0: the hunk only removes lines). */
	newCount = 0;

	read(text: string): DiffLine {
		const first = text.charCodeAt(0);
		if (this.inHunk) {
			if (first === 92) return "quoted";
			if (this.parentsLeft === null ? this.unifiedLine(text, first) : this.combinedLine(text, this.parentsLeft)) {
				return "quoted";
			}
			this.inHunk = false;
		}
		if (first === 64 && text.startsWith("@@ ")) {
			const hunk = DIFF_HUNK.exec(text);
			if (hunk) {
				this.inHunk = true;
				this.parentsLeft = null;
				this.oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
				this.newStart = Number(hunk[2]);
				this.newCount = hunk[3] === undefined ? 1 : Number(hunk[3]);
				this.newLeft = this.newCount;
				return "hunk";
			}
		} else if (first === 64 && text.startsWith("@@@")) {
			const hunk = COMBINED_HUNK.exec(text);
			const parents = hunk
				? [...hunk[2].matchAll(PARENT_RANGE)].map((range) => (range[1] === undefined ? 1 : Number(range[1])))
				: [];
			if (hunk && parents.length === hunk[1].length - 1) {
				this.inHunk = true;
				this.parentsLeft = parents;
				this.newStart = Number(hunk[3]);
				this.newCount = hunk[4] === undefined ? 1 : Number(hunk[4]);
				this.newLeft = this.newCount;
				return "hunk";
			}
		}
		return "other";
	}

	/** A unified diff's line: the hunk's only while its side has lines left (a context line needs both). */
	private unifiedLine(text: string, first: number): boolean {
		if (text === "" || first === 32) {
			if (this.oldLeft <= 0 || this.newLeft <= 0) return false;
			this.oldLeft--;
			this.newLeft--;
			return true;
		}
		if (first === 45) {
			if (this.oldLeft <= 0) return false;
			this.oldLeft--;
			return true;
		}
		if (first === 43) {
			if (this.newLeft <= 0) return false;
			this.newLeft--;
			return true;
		}
		return false;
	}

	/**
	 * A combined diff's line: one column per parent. A `-` in a column: the line is that parent's and
	 * not the result's; otherwise it is the result's, and a parent's where its column is a space. The
	 * line is the hunk's only while the result and each parent holding it have lines left.
	 */
	private combinedLine(text: string, parentsLeft: number[]): boolean {
		const n = parentsLeft.length;
		// An empty line is an empty context line (git may leave out its columns of spaces).
		if (text !== "" && text.length < n) return false;
		let removed = false;
		for (let i = 0; i < n && text !== ""; i++) {
			const c = text.charCodeAt(i);
			if (c === 45) removed = true;
			else if (c !== 32 && c !== 43) return false;
		}
		if (!removed && this.newLeft <= 0) return false;
		const holds = (i: number) => {
			const c = text === "" ? 32 : text.charCodeAt(i);
			return c === 45 || (c === 32 && !removed);
		};
		for (let i = 0; i < n; i++) if (holds(i) && parentsLeft[i] <= 0) return false;
		for (let i = 0; i < n; i++) if (holds(i)) parentsLeft[i]--;
		if (!removed) this.newLeft--;
		return true;
	}
}

/**
 * A diff's `+++ ` line (the new file's path): the outcome scanner reads it as part of the diff, never
 * as a line of this run, wherever it stands.
 */
export const isDiffTarget = (text: string): boolean => text.charCodeAt(0) === 43 && text.startsWith("+++ ");

/**
 * Unified diffs: each hunk's start in the new file is a location (`path:line`), and the lines inside a
 * hunk are quoted content, never diagnostics of this run, so no other rule may read them.
 * Returns true for lines that belong to the diff.
 */
export function createDiffParser(state: ScanState): (text: string, lineNo: number) => boolean {
	const reader = new DiffReader();
	let file: string | null = null;

	return (text, lineNo) => {
		const line = reader.read(text);
		if (line === "quoted") return true;
		if (line === "hunk") {
			if (file !== null && reader.newCount !== 0) state.addLocation(file, reader.newStart, undefined, lineNo);
			return true;
		}
		if (isDiffTarget(text)) {
			const target = DIFF_TARGET.exec(text);
			file = target && target[1] !== "/dev/null" ? target[1] : null;
			return true;
		}
		return false;
	};
}
