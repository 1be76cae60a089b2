import { appendFileSync, closeSync, ftruncateSync, openSync, readFileSync } from "node:fs";
import { formatBytes, PRIVATE_FILE_MODE } from "../home/index.js";
import { EntryPlacer } from "./placement.js";

/** The longest line read (an entry with large images is a few MB): longer is damage, never a string too long to make. */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * The deepest nesting of arrays and objects a line may hold: JSON.parse reads any depth, but
 * writing such a record back (a fork, a request) overflows the stack. Real entries nest a few levels.
 */
export const MAX_NESTING = 512;

/** What reading a session file found, line by line. */
export interface SessionFileScan {
	/**
	 * Every record read, header first, up to the first damaged line, each with its place in the tree
	 * (see `EntryPlacer`). A header of the wrong shape is itself damage (line 1 of the file):
	 * `records` is then empty.
	 */
	records: unknown[];
	/**
	 * A line in the middle of the file that does not parse, or parses to something that is not an
	 * entry of this session (1-based). Records after it are not read: the tree may hang on the lost entry.
	 */
	damagedLine?: number;
	/** What is wrong with `damagedLine` when it parses (a JSON syntax error needs no words). */
	damage?: string;
	/** Lines holding something after `damagedLine`: entries that are not read, named to the user. */
	unreadLines?: { count: number; first: number; last: number };
	/**
	 * The last line has no newline: the process died mid-write. `fragment` holds its bytes (kept in
	 * `records` when they still form a whole entry), `offset` where it starts.
	 */
	tornTail?: { offset: number; fragment: Buffer; parsed: boolean };
	/** Lines of entries written without `id` or `parentId` (an older, linear file), placed in file order. */
	linearLines: number[];
	/** Compactions whose kept part could not be found, and what is kept instead (sentences for the user). */
	repairs: string[];
}

/**
 * Read a session file without changing it. A torn last line is reported apart, never as damage:
 * every append writes a whole line, so only the newest write can be cut short.
 *
 * Each line is checked and placed as it is read (see `validate.ts`, `placement.ts`): the header is
 * first; every entry has the fields the agent reads, an id of its own, and a parent on an earlier
 * line (or none; or, written without one, the line before). Appends only ever hang an entry under
 * one already written, so a parent that is not earlier (itself, a later line: a cycle) or a second
 * header is damage at that line, never a tree to walk. Lines are decoded one at a time, so a file
 * larger than the longest string JavaScript can hold is still read.
 */
export function scanSessionFile(path: string): SessionFileScan {
	const bytes = readFileSync(path);
	const end = bytes.lastIndexOf(0x0a) + 1;
	const placer = new EntryPlacer();
	const scan: SessionFileScan = { records: [], linearLines: placer.linearLines, repairs: placer.repairs };
	let line = 0;
	for (let start = 0, stop = 0; start < end; start = stop + 1) {
		stop = bytes.indexOf(0x0a, start);
		line++;
		const damage = readLine(bytes, start, stop, line, placer, scan.records);
		if (damage === undefined) continue;
		scan.damagedLine = line;
		if (damage !== "") scan.damage = damage;
		scan.unreadLines = linesAfter(bytes, stop + 1, end, line);
		return scan;
	}
	if (end < bytes.length) {
		const parsed = readLine(bytes, end, bytes.length, line + 1, placer, scan.records) === undefined;
		scan.tornTail = { offset: end, fragment: bytes.subarray(end), parsed };
	}
	return scan;
}

/**
 * Parse and place the record of bytes `start` to `stop` (line `line`), adding it to `records`.
 * Undefined when it was read (or the line is blank); the damage otherwise: "" for text that is not
 * JSON, which needs no words.
 */
function readLine(
	bytes: Buffer,
	start: number,
	stop: number,
	line: number,
	placer: EntryPlacer,
	records: unknown[],
): string | undefined {
	if (stop - start > MAX_LINE_BYTES) {
		return `the line is ${formatBytes(stop - start)} long, more than the ${formatBytes(MAX_LINE_BYTES)} an entry may take`;
	}
	const text = bytes.toString("utf8", start, stop);
	if (text.trim() === "") return undefined;
	if (nestedTooDeep(bytes, start, stop)) {
		return `it nests arrays or objects more than ${MAX_NESTING} levels deep, which no entry does`;
	}
	let record: unknown;
	try {
		record = JSON.parse(text);
	} catch {
		return "";
	}
	const problem = placer.place(record, line, records);
	if (problem) return problem;
	records.push(record);
	return undefined;
}

/**
 * Whether the JSON text of bytes `start` to `stop` opens more than `MAX_NESTING` levels (outside
 * strings). Strings, most of an entry's bytes, are skipped to their closing quote in one search.
 */
function nestedTooDeep(bytes: Buffer, start: number, stop: number): boolean {
	if (stop - start <= MAX_NESTING) return false;
	let depth = 0;
	for (let at = start; at < stop; at++) {
		const byte = bytes[at];
		if (byte === 0x22) at = stringEnd(bytes, at, stop);
		else if (byte === 0x5b || byte === 0x7b) {
			if (++depth > MAX_NESTING) return true;
		} else if (byte === 0x5d || byte === 0x7d) depth--;
	}
	return false;
}

/** Where the string opened by the quote at `quote` closes (`stop` when it does not). */
function stringEnd(bytes: Buffer, quote: number, stop: number): number {
	for (let at = bytes.indexOf(0x22, quote + 1); at !== -1 && at < stop; at = bytes.indexOf(0x22, at + 1)) {
		let backslashes = 0;
		while (bytes[at - 1 - backslashes] === 0x5c) backslashes++;
		if (backslashes % 2 === 0) return at;
	}
	return stop;
}

/** The lines holding something from `start` to `end` (the line after `line` on). */
function linesAfter(bytes: Buffer, start: number, end: number, line: number): SessionFileScan["unreadLines"] {
	let count = 0;
	let first = 0;
	let last = 0;
	for (let at = start; at < bytes.length; ) {
		const stop = at < end ? bytes.indexOf(0x0a, at) : bytes.length;
		line++;
		// A line of blanks is not an entry (a torn tail is one when it has anything).
		if (hasContent(bytes, at, stop)) {
			count++;
			first ||= line;
			last = line;
		}
		at = stop + 1;
	}
	return count > 0 ? { count, first, last } : undefined;
}

function hasContent(bytes: Buffer, start: number, stop: number): boolean {
	for (let at = start; at < stop; at++) {
		const byte = bytes[at];
		if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return true;
	}
	return false;
}

/** Keep a torn last line in `<file>.torn` (appended: nothing is lost). */
export function saveTornFragment(path: string, torn: NonNullable<SessionFileScan["tornTail"]>): void {
	appendFileSync(tornFragmentPath(path), Buffer.concat([torn.fragment, Buffer.from("\n")]), {
		mode: PRIVATE_FILE_MODE,
	});
}

/** Where a torn last line is kept once it was moved out of the session file. */
export function tornFragmentPath(sessionPath: string): string {
	return `${sessionPath}.torn`;
}

/**
 * Make the file end with a whole line before anything is appended: a fragment that parsed only
 * lacks its newline; any other fragment is moved to `<file>.torn` (appended there, so nothing is
 * lost) and cut from the session file. Without this the next entry would be written onto it.
 */
export function repairTornTail(path: string, torn: NonNullable<SessionFileScan["tornTail"]>): void {
	if (torn.parsed) {
		appendFileSync(path, "\n");
		return;
	}
	saveTornFragment(path, torn);
	const fd = openSync(path, "r+");
	try {
		ftruncateSync(fd, torn.offset);
	} finally {
		closeSync(fd);
	}
}
