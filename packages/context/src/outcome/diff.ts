import type { ScanState } from "./state.js";

const DIFF_TARGET = /^\+\+\+ (?:b\/)?(.+?)\t?$/;
const DIFF_HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/**
 * Unified diffs: each hunk's start in the new file is a location (`path:line`), and the lines inside a
 * hunk are quoted content, never diagnostics of this run, so no other rule may read them.
 * Returns true for lines that belong to the diff.
 */
export function createDiffParser(state: ScanState): (text: string, lineNo: number) => boolean {
	let file: string | null = null;
	let inHunk = false;

	return (text, lineNo) => {
		const first = text.charCodeAt(0);
		if (inHunk) {
			// ' ', '+', '-', '\' (no newline at end of file); an empty line is an empty context line.
			if (text === "" || first === 32 || first === 43 || first === 45 || first === 92) {
				if (!text.startsWith("+++ ") && !text.startsWith("--- ")) return true;
			}
			if (first !== 64 /* @ */) inHunk = false;
		}
		if (first === 43 && text.startsWith("+++ ")) {
			const target = DIFF_TARGET.exec(text);
			file = target && target[1] !== "/dev/null" ? target[1] : null;
			return true;
		}
		if (first === 64 && text.startsWith("@@ ")) {
			const hunk = DIFF_HUNK.exec(text);
			if (hunk) {
				inHunk = true;
				if (file !== null && hunk[2] !== "0") state.addLocation(file, Number(hunk[1]), undefined, lineNo);
				return true;
			}
		}
		return false;
	};
}
