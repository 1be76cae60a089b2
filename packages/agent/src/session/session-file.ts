import { appendFileSync, closeSync, ftruncateSync, openSync, readFileSync } from "node:fs";
import { PRIVATE_FILE_MODE } from "../home/index.js";

/** What reading a session file found, line by line. */
export interface SessionFileScan {
	/** Every record that parsed, header first, up to the first damaged line. */
	records: unknown[];
	/**
	 * A line in the middle of the file that does not parse (1-based). Records after it are not read:
	 * the tree may hang on the lost entry.
	 */
	damagedLine?: number;
	/**
	 * The last line has no newline: the process died mid-write. `fragment` holds its bytes (kept in
	 * `records` when they still parse), `offset` where it starts.
	 */
	tornTail?: { offset: number; fragment: Buffer; parsed: boolean };
}

/**
 * Read a session file without changing it. A torn last line is reported apart, never as damage:
 * every append writes a whole line, so only the newest write can be cut short.
 */
export function scanSessionFile(path: string): SessionFileScan {
	const bytes = readFileSync(path);
	const end = bytes.lastIndexOf(0x0a) + 1;
	const scan: SessionFileScan = { records: [] };
	const lines = bytes.subarray(0, end).toString("utf8").split("\n");
	for (let index = 0; index < lines.length; index++) {
		const line = lines[index] as string;
		if (line.trim() === "") continue;
		try {
			scan.records.push(JSON.parse(line));
		} catch {
			scan.damagedLine = index + 1;
			return scan;
		}
	}
	if (end < bytes.length) {
		const fragment = bytes.subarray(end);
		let parsed = false;
		try {
			scan.records.push(JSON.parse(fragment.toString("utf8")));
			parsed = true;
		} catch {
			// A fragment of an entry: it is moved aside before the next append.
		}
		scan.tornTail = { offset: end, fragment, parsed };
	}
	return scan;
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
