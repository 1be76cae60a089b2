import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { UserError } from "../errors.js";
import { writeFileAtomically, writingTo } from "./disk.js";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Create a directory (and parents) readable by the user only; a refused write is a `DiskWriteError`. */
export function ensurePrivateDir(path: string): void {
	if (!existsSync(path)) writingTo(path, () => mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE }));
}

/**
 * Read a JSON config file. A missing or empty file yields `undefined`; a file that does not parse
 * is a user error naming the file, so a typo never silently resets someone's configuration.
 */
export function readJsonFile(path: string): unknown {
	if (!existsSync(path)) return undefined;
	const text = readFileSync(path, "utf8");
	if (text.trim() === "") return undefined;
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new UserError(
			`${path} is not valid JSON (${(error as Error).message}).`,
			"Fix the file by hand or move it aside; it was left untouched.",
		);
	}
}

/**
 * Write JSON atomically (temp file, then rename) with user-only permissions. A failed write leaves
 * no temp file; one the disk refused is a `DiskWriteError` naming the file and its disk.
 */
export function writePrivateJson(path: string, value: unknown): void {
	ensurePrivateDir(dirname(path));
	writeFileAtomically(path, `${JSON.stringify(value, null, "\t")}\n`, PRIVATE_FILE_MODE);
}
