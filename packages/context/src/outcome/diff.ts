import type { ScanState } from "./state.js";

/** The new file's path: up to a tab (git ends a path holding a space with one; `diff -u` puts a date after it). */
const DIFF_TARGET = /^\+\+\+ (?:b\/)?([^\t]+)/;
const DIFF_HUNK = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** What one line of an output is to a unified diff read in order (see `DiffReader`). */
export type DiffLine = "quoted" | "hunk" | "other";

/**
 * Follows the hunks of unified diffs through an output, line by line (visible text, ANSI removed).
 * A hunk header (`@@ -a,b +c,d @@`) says how many old and new lines follow; those lines (` `, `-`,
 * `+`, an empty line as an empty context line, and `\ No newline at end of file`) are quoted
 * content, never lines of this run: a `+    raise ValueError(...)` is a file's text, not an error.
 * Counting them ends the hunk exactly where the diff says, so output after a diff (a test run in the
 * same command) is read as output, and a removed `-- comment` line (`--- comment`) stays content.
 */
export class DiffReader {
	/** Old and new lines of the current hunk still to come (a context line counts on both sides). */
	private oldLeft = 0;
	private newLeft = 0;
	/** Inside a hunk: its lines, then any `\` note after its last line. */
	private inHunk = false;
	/** The first new line of the hunk whose header was read last. */
	newStart = 0;
	/** How many new lines that hunk holds (0: the hunk only removes lines). */
	newCount = 0;

	read(text: string): DiffLine {
		const first = text.charCodeAt(0);
		if (this.inHunk) {
			// A line is the hunk's only while its side has lines left: a context line needs both.
			if (text === "" || first === 32) {
				if (this.oldLeft > 0 && this.newLeft > 0) {
					this.oldLeft--;
					this.newLeft--;
					return "quoted";
				}
			} else if (first === 45) {
				if (this.oldLeft > 0) {
					this.oldLeft--;
					return "quoted";
				}
			} else if (first === 43) {
				if (this.newLeft > 0) {
					this.newLeft--;
					return "quoted";
				}
			} else if (first === 92) return "quoted";
			this.inHunk = false;
		}
		if (first === 64 && text.startsWith("@@ ")) {
			const hunk = DIFF_HUNK.exec(text);
			if (hunk) {
				this.inHunk = true;
				this.oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
				this.newStart = Number(hunk[2]);
				this.newCount = hunk[3] === undefined ? 1 : Number(hunk[3]);
				this.newLeft = this.newCount;
				return "hunk";
			}
		}
		return "other";
	}
}

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
		if (text.charCodeAt(0) === 43 && text.startsWith("+++ ")) {
			const target = DIFF_TARGET.exec(text);
			file = target && target[1] !== "/dev/null" ? target[1] : null;
			return true;
		}
		return false;
	};
}
