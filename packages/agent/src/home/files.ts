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
			`${path} is not valid JSON (${jsonProblem(text, error as Error)}).`,
			"Fix the file by hand or move it aside; it was left untouched.",
		);
	}
}

const AT_POSITION = / in JSON at position (\d+)/;
const UNEXPECTED_TOKEN = /^Unexpected token/;

/**
 * What is wrong with `text`, which `JSON.parse` refused with `error`, and where (line and column),
 * never quoting the text: V8's message quotes a slice of it, and auth.json's slice is a key.
 */
export function jsonProblem(text: string, error: Error): string {
	const message = error.message;
	if (message === "Unexpected end of JSON input") return "it ends before the JSON value is complete";
	const at = AT_POSITION.exec(message);
	if (at && !UNEXPECTED_TOKEN.test(message)) {
		return `${message.slice(0, at.index)} at ${lineAndColumn(text, Number(at[1]))}`;
	}
	if (!UNEXPECTED_TOKEN.test(message)) return "it does not parse as JSON";
	// The message gives no position: the shortest prefix that fails the same way ends at the character.
	let low = 1;
	let high = text.length;
	while (low < high) {
		const middle = Math.floor((low + high) / 2);
		if (failsOnToken(text.slice(0, middle))) high = middle;
		else low = middle + 1;
	}
	return `Unexpected character at ${lineAndColumn(text, low - 1)}`;
}

function failsOnToken(prefix: string): boolean {
	try {
		JSON.parse(prefix);
		return false;
	} catch (error) {
		return UNEXPECTED_TOKEN.test((error as Error).message);
	}
}

function lineAndColumn(text: string, position: number): string {
	const before = text.slice(0, position);
	const line = before.split("\n").length;
	return `line ${line}, column ${position - before.lastIndexOf("\n")}`;
}

/**
 * Write JSON atomically (temp file, then rename) with user-only permissions. A failed write leaves
 * no temp file; one the disk refused is a `DiskWriteError` naming the file and its disk.
 */
export function writePrivateJson(path: string, value: unknown): void {
	ensurePrivateDir(dirname(path));
	writeFileAtomically(path, `${JSON.stringify(value, null, "\t")}\n`, PRIVATE_FILE_MODE);
}
