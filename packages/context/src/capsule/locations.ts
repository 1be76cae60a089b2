import { isLibraryPath } from "../outcome/state.js";
import type { Outcome } from "../types.js";
import { escapeXmlText, utf8Bytes } from "./escape.js";

/**
 * How decisive a location is; lower is listed first and dropped last.
 * - 0: the first or last project frame of a printed stack (the test frame and the raising frame of a
 *   failure), or a location that is not part of a stack (a compiler, linter or diff location);
 * - 1: a project frame between those two;
 * - 2: a library, standard-library or runtime frame.
 */
export type LocationRank = 0 | 1 | 2;

interface RankedLocation {
	file: string;
	line: number;
	rank: LocationRank;
	/** Position in the outcome's list (first seen), the tie-break. */
	order: number;
}

/** Frames printed within this many output lines of each other belong to one stack. */
const STACK_GAP = 2;

/**
 * Ranks each deduplicated location. A stack is a run of locations printed on nearby output lines
 * that names at least two files (a traceback or a JavaScript stack); its project frames other than
 * the first and the last are intermediate. A run in one file (an ESLint block) is a list of equal
 * diagnostics, not a stack.
 */
export function rankLocations(locations: Outcome["locations"]): RankedLocation[] {
	const seen = new Set<string>();
	const unique: Outcome["locations"][number][] = [];
	for (const loc of locations) {
		const key = `${loc.file}:${loc.line}`;
		if (seen.has(key)) continue;
		seen.add(key);
		unique.push(loc);
	}
	// A file's frames are all library frames or none: its path is tested once.
	const libraryFile = new Map<string, boolean>();
	const library = unique.map((loc) => {
		let is = libraryFile.get(loc.file);
		if (is === undefined) {
			is = isLibraryPath(loc.file);
			libraryFile.set(loc.file, is);
		}
		return is;
	});
	const byOutput = unique.map((_, order) => order).sort((a, b) => unique[a].at - unique[b].at || a - b);
	const rank = new Array<LocationRank>(unique.length).fill(0);
	for (let start = 0; start < byOutput.length; ) {
		let end = start + 1;
		while (end < byOutput.length && unique[byOutput[end]].at - unique[byOutput[end - 1]].at <= STACK_GAP) end++;
		let firstProject = -1;
		let lastProject = -1;
		let isStack = false;
		for (let at = start; at < end; at++) {
			const order = byOutput[at];
			if (unique[order].file !== unique[byOutput[start]].file) isStack = true;
			if (library[order]) rank[order] = 2;
			else {
				if (firstProject < 0) firstProject = order;
				lastProject = order;
			}
		}
		if (isStack) {
			for (let at = start; at < end; at++) {
				const order = byOutput[at];
				if (!library[order] && order !== firstProject && order !== lastProject) rank[order] = 1;
			}
		}
		start = end;
	}
	return unique.map((loc, order) => ({ file: loc.file, line: loc.line, rank: rank[order], order }));
}

/**
 * The deepest directory (ending in `/`) holding every absolute project location (the project's
 * root, usually), or every absolute location when none is a project one; "" when there are fewer
 * than two or it is under two levels. Paths under it are shown relative to it; the others (library
 * frames elsewhere) stay absolute.
 */
function commonDirectory(files: readonly string[]): string {
	const absolute = files.filter((f) => f.startsWith("/"));
	const project = absolute.filter((f) => !isLibraryPath(f));
	const candidates = project.length > 0 ? project : absolute;
	if (candidates.length < 2) return "";
	let prefix = candidates[0].slice(0, candidates[0].lastIndexOf("/") + 1);
	for (const file of candidates) {
		while (!file.startsWith(prefix)) prefix = prefix.slice(0, prefix.lastIndexOf("/", prefix.length - 2) + 1);
	}
	return prefix.split("/").length < 4 ? "" : prefix;
}

/** The note that ends a listing cut short; sized for the largest counts so the reserve always holds it. */
function moreNote(locations: number, files: number): string {
	return `(+${locations} more locations in ${files} files: search the archive for a file name)`;
}

/**
 * Source locations grouped by file, one file per line as `path:line,line,...` (lines ascending),
 * within `maxBytes` of escaped text (newlines included). When every path is absolute, those under one
 * directory are shown relative to it, stated once in the header (with relative paths in the output
 * too, shortened ones would be mistaken for them). The most decisive locations are admitted first (test and
 * raising frames, then intermediate project frames, then library frames; ties in first-seen order),
 * and files are listed in the order their first admitted location was. What does not fit is counted
 * in a closing note. Empty when there are no locations or none fits.
 */
export function locationLines(outcome: Outcome, maxBytes: number): string[] {
	const ranked = rankLocations(outcome.locations);
	if (ranked.length === 0) return [];
	// Shortened paths would read like the output's own relative paths, so shorten only when none is relative.
	const files = ranked.map((loc) => loc.file);
	const base = files.every((file) => file.startsWith("/")) ? commonDirectory(files) : "";
	const relative = (file: string) => (base && file.startsWith(base) ? file.slice(base.length) : file);
	const fileCount = new Set(ranked.map((loc) => loc.file)).size;
	const header = `LOCATIONS (${ranked.length} in ${fileCount} file${fileCount === 1 ? "" : "s"}; each line is path:line,line,...${base ? ` under ${base}` : ""}):`;
	const headerBytes = utf8Bytes(escapeXmlText(header)) + 1;
	const admitted = new Map<string, number[]>();
	const ordered = [...ranked].sort((a, b) => a.rank - b.rank || a.order - b.order);
	// A new file costs its row (`path:N` and a newline); a further line of it costs `,N` (ASCII). A row's
	// size is worked out once: `admit` may run twice over thousands of locations.
	const rowCosts: number[] = [];
	const rowCost = (index: number, loc: RankedLocation) =>
		(rowCosts[index] ??= utf8Bytes(escapeXmlText(`${relative(loc.file)}:${loc.line}`)) + 1);
	const admit = (budget: number): number => {
		admitted.clear();
		let used = headerBytes;
		let count = 0;
		for (const [index, loc] of ordered.entries()) {
			const lines = admitted.get(loc.file);
			const cost = lines ? `,${loc.line}`.length : rowCost(index, loc);
			if (used + cost > budget) continue;
			used += cost;
			count++;
			if (lines) lines.push(loc.line);
			else admitted.set(loc.file, [loc.line]);
		}
		return count;
	};
	let count = admit(maxBytes);
	if (count < ranked.length) {
		count = admit(maxBytes - utf8Bytes(moreNote(ranked.length, fileCount)) - 1);
	}
	if (count === 0) return [];
	const rows = [...admitted.entries()].map(
		([file, lines]) => `${relative(file)}:${lines.sort((a, b) => a - b).join(",")}`,
	);
	const out = [header, ...rows];
	if (count < ranked.length) {
		out.push(moreNote(ranked.length - count, fileCount - countFullFiles(ranked, admitted)));
	}
	return out;
}

/** Files every location of which is listed. */
function countFullFiles(ranked: readonly RankedLocation[], admitted: Map<string, number[]>): number {
	const total = new Map<string, number>();
	for (const loc of ranked) total.set(loc.file, (total.get(loc.file) ?? 0) + 1);
	let full = 0;
	for (const [file, lines] of admitted) if (lines.length === total.get(file)) full++;
	return full;
}
