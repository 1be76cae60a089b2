import { appendFileSync, closeSync, ftruncateSync, openSync, readFileSync } from "node:fs";
import { PRIVATE_FILE_MODE } from "../home/index.js";
import type { SessionEntry } from "./types.js";
import { entryProblem, headerProblem } from "./validate.js";

/** What reading a session file found, line by line. */
export interface SessionFileScan {
	/**
	 * Every record read, header first, up to the first damaged line. A header of the wrong shape is
	 * itself damage (line 1 of the file): `records` is then empty.
	 */
	records: unknown[];
	/**
	 * A line in the middle of the file that does not parse, or parses to something that is not an
	 * entry of this session (1-based). Records after it are not read: the tree may hang on the lost entry.
	 */
	damagedLine?: number;
	/** What is wrong with `damagedLine` when it parses (a JSON syntax error needs no words). */
	damage?: string;
	/**
	 * The last line has no newline: the process died mid-write. `fragment` holds its bytes (kept in
	 * `records` when they still form a whole entry), `offset` where it starts.
	 */
	tornTail?: { offset: number; fragment: Buffer; parsed: boolean };
}

/**
 * Read a session file without changing it. A torn last line is reported apart, never as damage:
 * every append writes a whole line, so only the newest write can be cut short.
 *
 * Each line is checked as it is read (see `validate.ts`): the header is first; every entry has the
 * fields the agent reads, an id of its own, and a parent on an earlier line (or none). Appends only
 * ever hang an entry under one already written, so a parent that is not earlier (itself, a later
 * line: a cycle) or a second header is damage at that line, never a tree to walk.
 */
export function scanSessionFile(path: string): SessionFileScan {
	const bytes = readFileSync(path);
	const end = bytes.lastIndexOf(0x0a) + 1;
	const scan: SessionFileScan = { records: [] };
	const reader = new RecordChecker();
	const lines = bytes.subarray(0, end).toString("utf8").split("\n");
	for (let index = 0; index < lines.length; index++) {
		const line = lines[index] as string;
		if (line.trim() === "") continue;
		let record: unknown;
		try {
			record = JSON.parse(line);
		} catch {
			scan.damagedLine = index + 1;
			return scan;
		}
		const problem = reader.problem(record);
		if (problem) {
			scan.damagedLine = index + 1;
			scan.damage = problem;
			return scan;
		}
		scan.records.push(record);
	}
	if (end < bytes.length) {
		const fragment = bytes.subarray(end);
		let parsed = false;
		try {
			const record = JSON.parse(fragment.toString("utf8"));
			if (!reader.problem(record)) {
				scan.records.push(record);
				parsed = true;
			}
		} catch {
			// A fragment of an entry: it is moved aside before the next append.
		}
		scan.tornTail = { offset: end, fragment, parsed };
	}
	return scan;
}

/** Checks the records of one file in order: the header, then entries hanging on earlier ones. */
class RecordChecker {
	private readonly ids = new Set<string>();
	private first = true;

	/** Why `record` cannot come next in the file; undefined when it can (and it is then remembered). */
	problem(record: unknown): string | undefined {
		if (this.first) {
			this.first = false;
			// Anything but a session header is not a session file at all; the caller says so.
			if ((record as { type?: unknown } | null)?.type !== "session") return undefined;
			return headerProblem(record);
		}
		const problem = entryProblem(record);
		if (problem) return problem;
		const { id, parentId } = record as SessionEntry;
		if (this.ids.has(id)) return `the entry id ${id} was used by an earlier line`;
		if (parentId === id) return `the entry ${id} is its own parent`;
		if (parentId !== null && !this.ids.has(parentId)) {
			return `the parent ${parentId} of entry ${id} is not on an earlier line`;
		}
		this.ids.add(id);
		return undefined;
	}
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
	appendFileSync(tornFragmentPath(path), Buffer.concat([torn.fragment, Buffer.from("\n")]), {
		mode: PRIVATE_FILE_MODE,
	});
	const fd = openSync(path, "r+");
	try {
		ftruncateSync(fd, torn.offset);
	} finally {
		closeSync(fd);
	}
}
