/**
 * Retention of labelled facts in a view. A fact counts as kept when it is legible in the view: its
 * exact string appears in the view as written, or after removing ANSI escapes and decoding XML
 * entities (capsules escape `<`, `&` and quotes; a reader sees the same characters).
 */
import type { CaseMeta, LabelledCounts } from "../corpus/index.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes start with ESC.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** An ANSI escape whose ESC a capsule replaced with U+FFFD (control characters are not valid XML). */
const REPLACED_ANSI = /\uFFFD\[[0-?]*[ -/]*[@-~]/g;

/** The view as a reader sees it: no ANSI escapes (raw or with ESC replaced), XML entities decoded. */
export function legible(view: string): string {
	let plain = view.includes("\u001b") ? view.replace(ANSI, "") : view;
	if (plain.includes("\uFFFD")) plain = plain.replace(REPLACED_ANSI, "");
	if (!plain.includes("&")) return plain;
	return plain.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (entity, name: string) => {
		if (name[0] === "#") {
			const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
			return Number.isFinite(code) ? String.fromCodePoint(code) : entity;
		}
		return ENTITIES[name.toLowerCase()] ?? entity;
	});
}

/** A view prepared once for many fact checks. */
export interface PreparedView {
	raw: string;
	plain: string;
	/** Rows of location listings (`file:line` or `file:line,line,...` tokens), parsed on first use. */
	groups?: { dir: string; file: string; lines: Set<string> }[];
}

export function prepareView(view: string): PreparedView {
	return { raw: view, plain: legible(view) };
}

/** The exact label string is legible in the view. */
export function factKept(view: PreparedView, fact: string): boolean {
	return view.raw.includes(fact) || view.plain.includes(legible(fact));
}

/** `needle` occurs in `text` not followed by a digit (so `a.py:12` does not match `a.py:123`). */
function includesBounded(text: string, needle: string): boolean {
	for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
		const next = text.charCodeAt(at + needle.length);
		if (!(next >= 48 && next <= 57)) return true;
	}
	return false;
}

/**
 * A `path:line` location is legible in the view in any of the shapes tools print it:
 * `path:line` itself (pytest, jest, cargo, ...); a Python traceback frame `File ".../path", line N`;
 * `tsc --pretty false` `path(line,col)`; an ESLint stylish block (the file header line, then a
 * `line:col` row before the next blank line); a git diff hunk of that file starting at that line; or
 * a listing row: a line of space-separated `file:line` or `file:line,line,...` tokens (one file, its
 * lines comma-separated), the file relative to the directory of a header ending `under <dir>/):` or
 * `under <dir>/:` right before the rows, else as written; the comma list must hold that exact line.
 */
export function locationKept(view: PreparedView, location: string): boolean {
	const match = /^(.*):(\d+)$/.exec(location);
	if (!match) return factKept(view, location);
	const [, path, line] = match;
	const text = view.plain;
	if (!text.includes(path.slice(path.lastIndexOf("/") + 1))) return false;
	if (includesBounded(text, `${path}:${line}`)) return true;
	if (includesBounded(text, `${path}", line ${line}`)) return true;
	if (text.includes(`${path}(${line},`)) return true;
	return eslintBlockHas(text, path, line) || diffHunkHas(text, path, Number(line)) || listedHas(view, path, line);
}

/** A listing row token: `file:line` or `file:line,line,...` (one file, its lines comma-separated). */
const LISTING_TOKEN = /^(\S+):(\d+(?:,\d+)*)$/;

/**
 * Rows of location listings: lines made only of space-separated listing tokens. Rows right after a
 * header ending `under <dir>/):` (or `under <dir>/:`) are relative to that directory, up to the first
 * line that is not a row; any other row stands alone, with its paths as written.
 */
function listingRows(view: PreparedView): { dir: string; file: string; lines: Set<string> }[] {
	if (view.groups) return view.groups;
	view.groups = [];
	let dir = "";
	for (const row of view.plain.split("\n")) {
		const header = /\bunder (\S+\/)\)?:\s*$/.exec(row);
		if (header) {
			dir = header[1];
			continue;
		}
		const tokens = row.trim().split(/\s+/);
		const parsed = tokens.map((token) => LISTING_TOKEN.exec(token));
		if (row.trim() === "" || parsed.some((match) => match === null)) {
			dir = "";
			continue;
		}
		for (const match of parsed) {
			if (match) view.groups.push({ dir, file: match[1], lines: new Set(match[2].split(",")) });
		}
	}
	return view.groups;
}

/**
 * The location is in a listing row: a token naming its file (relative to the row's stated directory,
 * if any) then `:` and a comma list holding that exact line (`a.py:12,40,77` holds 40, not 4).
 */
function listedHas(view: PreparedView, path: string, line: string): boolean {
	for (const row of listingRows(view)) {
		if (!row.lines.has(line)) continue;
		const full = row.dir + row.file;
		if (full === path || full.endsWith(`/${path}`)) return true;
	}
	return false;
}

function eslintBlockHas(text: string, path: string, line: string): boolean {
	const row = new RegExp(`^\\D{0,12}\\s${line}:\\d+\\s`);
	for (let at = text.indexOf(path); at >= 0; at = text.indexOf(path, at + 1)) {
		const lineEnd = text.indexOf("\n", at);
		if (lineEnd < 0) return false;
		if (text[at + path.length] !== "\n" && text[at + path.length] !== "\r") continue;
		let end = text.indexOf("\n\n", lineEnd);
		if (end < 0) end = text.length;
		for (const row_ of text.slice(lineEnd + 1, end).split("\n")) if (row.test(row_)) return true;
	}
	return false;
}

function diffHunkHas(text: string, path: string, line: number): boolean {
	const header = `diff --git a/${path} b/`;
	for (let at = text.indexOf(header); at >= 0; at = text.indexOf(header, at + 1)) {
		let end = text.indexOf("\ndiff --git ", at + header.length);
		if (end < 0) end = text.length;
		for (const hunk of text.slice(at, end).matchAll(/^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/gm)) {
			if (Number(hunk[1]) === line || Number(hunk[2]) === line) return true;
		}
	}
	return false;
}

/** Lines that say a run failed, whatever the runner (checked on the legible view). */
const FAILURE_SHAPES: RegExp[] = [
	/\bFAIL(?:ED|URES?)?\b/,
	/\b[1-9]\d*\s+(?:failed|failing|failures?|errors?|problems?)\b/i,
	/\b(?:failures|errors|failed)\s*[=:]\s*[1-9]/i,
	/^\s*(?:error|Error|ERROR)(?:\[|:|\s)/m,
	/\berror(?:\[E\d+\]|\sTS\d+)/,
	/Traceback \(most recent call last\)/,
	/\bpanicked at\b/,
	/^\s*not ok\b/m,
	/\bnpm (?:ERR!|error)\b/,
	/\b[A-Z]\w*(?:Error|Exception)\b/,
	/[✗✖✕×]/,
	/\bexit(?:ed)?(?: with)?(?: code| status)?\s*[:=]?\s*"?[1-9]\d*\b/i,
];

/** A summary that reads as a clean run. */
const PASS_SHAPES: RegExp[] = [
	/\b\d+ passed\b/,
	/^OK\b/m,
	/\b\d+ passing\b/,
	/test result: ok\b/,
	/\bTests?:?\s+\d+ passed/,
	/^# pass \d+/m,
	/\bpassed\b/i,
];

/**
 * The view shows the failure of a failed run: a labelled failing id or error type, or any
 * failure-shaped line (FAILED, `N failed`, an error line, a traceback, a panic, `not ok`, ...).
 */
export function showsFailure(view: PreparedView, meta: CaseMeta): boolean {
	if (meta.failing_ids.some((id) => factKept(view, id))) return true;
	if (meta.error_types.some((type) => factKept(view, type))) return true;
	return FAILURE_SHAPES.some((shape) => shape.test(view.plain));
}

export function looksPassing(view: PreparedView): boolean {
	return PASS_SHAPES.some((shape) => shape.test(view.plain));
}

/** The view states the exit code, e.g. `exit code 1`, `exit=1`, `exit_code="1"`, `exited with 1`. */
export function exitStated(view: PreparedView, exitCode: number): boolean {
	const pattern = /\bexit(?:ed)?(?:[ _-]?(?:code|status))?(?: with)?(?: code| status)?\s*[:=]?\s*"?(-?\d+)/gi;
	for (const match of view.plain.matchAll(pattern)) if (Number(match[1]) === exitCode) return true;
	return false;
}

/**
 * The labelled counts are shown: every non-zero failed/errors count appears as a number on a line
 * that names failures/errors, and the passed count (or the total) on a line that names passes or
 * tests. Measured on the raw output too, which gives the ceiling of this detector.
 */
export function countsShown(view: PreparedView, counts: LabelledCounts): boolean {
	const lines = view.plain.split("\n").filter((line) => /\d/.test(line));
	const onLine = (value: number, word: RegExp) =>
		lines.some((line) => word.test(line) && new RegExp(`(?<![\\d.])${value}(?![\\d.])`).test(line));
	const total = counts.passed + counts.failed + counts.skipped + counts.errors + (counts.xfailed ?? 0);
	if (counts.failed > 0 && !onLine(counts.failed, /fail/i)) return false;
	if (counts.errors > 0 && !onLine(counts.errors, /error/i)) return false;
	if (counts.passed > 0 && !onLine(counts.passed, /pass|ok\b/i) && !onLine(total, /\btests?\b|\bran\b/i)) return false;
	return true;
}

/** Retention of one view of a labelled case. */
export interface CaseRetention {
	failingIds: { kept: number; total: number };
	errorTypes: { kept: number; total: number };
	locations: { kept: number; total: number };
	/** Labels not kept (for inspection). */
	missing: { failingIds: string[]; errorTypes: string[]; locations: string[] };
	/** null when the case has no counts. */
	countsShown: boolean | null;
	exitStated: boolean;
	/** null for passing runs. True when a failed run's view shows no failure at all. */
	falseGreen: boolean | null;
	/** The false green also carries a pass-shaped summary (the worst kind). */
	falseGreenPassShaped: boolean;
}

export function retentionOf(viewText: string, meta: CaseMeta): CaseRetention {
	const view = prepareView(viewText);
	const missingIds = meta.failing_ids.filter((id) => !factKept(view, id));
	const missingTypes = meta.error_types.filter((type) => !factKept(view, type));
	const missingLocations = meta.locations.filter((location) => !locationKept(view, location));
	const failed = meta.outcome !== "pass" || meta.exit_code !== 0;
	const falseGreen = failed ? !showsFailure(view, meta) : null;
	return {
		failingIds: { kept: meta.failing_ids.length - missingIds.length, total: meta.failing_ids.length },
		errorTypes: { kept: meta.error_types.length - missingTypes.length, total: meta.error_types.length },
		locations: { kept: meta.locations.length - missingLocations.length, total: meta.locations.length },
		missing: { failingIds: missingIds, errorTypes: missingTypes, locations: missingLocations },
		countsShown: meta.counts ? countsShown(view, meta.counts) : null,
		exitStated: exitStated(view, meta.exit_code),
		falseGreen,
		falseGreenPassShaped: falseGreen === true && looksPassing(view),
	};
}
