import {
	BASE_SYSTEM_PROMPT,
	HARNESS_KINDS,
	HARNESS_LIMITS,
	type HarnessEntry,
	type HarnessFile,
	type HarnessKind,
	type HarnessScope,
	LEGACY_KINDS,
} from "./types.js";

/** A request the harness refuses; the message says what was wrong and what to do. */
export class HarnessError extends Error {}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** C0 controls and DEL, except tab, line feed and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters refused.
const CONTROL_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** The same characters, every one: what reading a store drops (the kernel drops the same). */
const CONTROL_CHARS = new RegExp(CONTROL_CHAR.source, "g");
/** Other spellings of the kinds accepted from the planner (`prompt` is the reference's name). */
const KIND_ALIASES: Readonly<Record<string, HarnessKind>> = {
	prompt: "prompt_note",
	prompt_notes: "prompt_note",
	note: "prompt_note",
	memories: "memory",
	procedures: "procedure",
	skill: "procedure",
	skills: "procedure",
	subagents: "subagent",
	subagent_spec: "subagent",
	sub_agent: "subagent",
};

export function checkKind(kind: unknown): HarnessKind {
	if (kind === BASE_SYSTEM_PROMPT) throw baseSystemPromptRefusal();
	if (typeof kind === "string") {
		if ((HARNESS_KINDS as readonly string[]).includes(kind)) return kind as HarnessKind;
		const alias = KIND_ALIASES[kind];
		if (alias) return alias;
	}
	throw new HarnessError(`${JSON.stringify(kind)} is not a harness kind; use one of ${HARNESS_KINDS.join(", ")}.`);
}

export function checkName(name: unknown): string {
	if (name === BASE_SYSTEM_PROMPT) throw baseSystemPromptRefusal();
	if (typeof name !== "string" || !NAME_PATTERN.test(name)) {
		throw new HarnessError(
			`${JSON.stringify(name)} is not a valid entry name; use letters, digits, ".", "_" and "-", starting with a letter or digit.`,
		);
	}
	if (name.length > HARNESS_LIMITS.nameChars) {
		throw new HarnessError(`the name has ${name.length} characters; at most ${HARNESS_LIMITS.nameChars} are allowed.`);
	}
	return name;
}

/**
 * The name of an entry to delete: any name an entry has (one written by hand may break the rules
 * a new name follows, and must still be removable), else a valid name (the error says what a name
 * may be).
 */
export function deletableName(name: unknown, exists: (name: string) => boolean): string {
	if (typeof name === "string" && name !== "" && exists(name)) return name;
	return checkName(name);
}

export function checkText(text: unknown): string {
	if (typeof text !== "string" || text.trim() === "") {
		throw new HarnessError("the text must be a non-empty string.");
	}
	// Characters are code points, as the kernel's `len()` counts them.
	const chars = Array.from(text);
	if (chars.length > HARNESS_LIMITS.textChars) {
		throw new HarnessError(
			`the text has ${chars.length} characters; at most ${HARNESS_LIMITS.textChars} are allowed. Keep the entry short and put details in a file it names.`,
		);
	}
	// A control character would reach every later system prompt (and some providers refuse it).
	const control = chars.findIndex((char) => CONTROL_CHAR.test(char));
	if (control >= 0) {
		const code = (chars[control] as string).charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
		throw new HarnessError(
			`the text holds a control character (U+${code} at character ${control + 1}); remove it (tabs and line breaks are fine).`,
		);
	}
	return text;
}

export function checkScope(scope: unknown): HarnessScope | undefined {
	if (scope === undefined || scope === null) return undefined;
	if (scope === "local" || scope === "global") return scope;
	throw new HarnessError(`scope ${JSON.stringify(scope)} is not "local" or "global".`);
}

export function baseSystemPromptRefusal(): HarnessError {
	return new HarnessError(
		"the base system prompt is not part of the harness and cannot be edited; add a prompt note instead (it is shown after the base prompt).",
	);
}

/** The current time as stored: ISO, UTC, milliseconds (the Python side writes the same). */
export function isoNow(now: number = Date.now()): string {
	return new Date(now).toISOString();
}

/** A new entry with its fields in the stored order. */
export function newEntry(kind: HarnessKind, name: string, text: string, at: string): HarnessEntry {
	return { kind, name, text, createdAt: at, updatedAt: at, uses: 0, lastUsedAt: null };
}

/** Put `entry` into the store's list (replacing the one of that kind and name), keeping the stored order. */
export function putEntry(file: HarnessFile, entry: HarnessEntry): void {
	const index = file.entries.findIndex((other) => other.kind === entry.kind && other.name === entry.name);
	if (index >= 0) file.entries[index] = entry;
	else file.entries.push(entry);
	file.entries.sort(compareEntries);
}

export function removeEntry(file: HarnessFile, kind: HarnessKind, name: string): HarnessEntry | undefined {
	const index = file.entries.findIndex((entry) => entry.kind === kind && entry.name === name);
	if (index < 0) return undefined;
	return file.entries.splice(index, 1)[0];
}

function compareEntries(a: HarnessEntry, b: HarnessEntry): number {
	const byKind = HARNESS_KINDS.indexOf(a.kind) - HARNESS_KINDS.indexOf(b.kind);
	if (byKind !== 0) return byKind;
	return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Check a parsed `harness.json`; an entry that does not fit is an error naming the file. An entry
 * written by hand may leave out its times and counts: they read as never written or used (fields
 * in the stored order, other fields kept after them), and control characters in its name and text
 * are dropped (they would reach every later system prompt), as the kernel reads them.
 */
export function parseHarnessFile(raw: unknown, path: string): HarnessFile {
	const value = raw as { version?: unknown; entries?: unknown };
	if (typeof raw !== "object" || raw === null || value.version !== 1 || !Array.isArray(value.entries)) {
		throw new Error(`${path} is not a harness store (version 1 with an "entries" list); fix it or move it aside.`);
	}
	const entries = (value.entries as HarnessEntry[]).map((entry) => {
		if (typeof entry === "object" && entry !== null) entry.kind = readKind(entry.kind) as HarnessKind;
		if (
			typeof entry !== "object" ||
			entry === null ||
			!(HARNESS_KINDS as readonly string[]).includes(entry.kind) ||
			typeof entry.name !== "string" ||
			typeof entry.text !== "string"
		) {
			throw new Error(`${path} holds an entry that is not {kind, name, text, ...}; fix it or move it aside.`);
		}
		const { kind, name, text, createdAt, updatedAt, uses, lastUsedAt, ...rest } = entry;
		return {
			kind,
			name: name.replace(CONTROL_CHARS, ""),
			text: text.replace(CONTROL_CHARS, ""),
			createdAt: typeof createdAt === "string" ? createdAt : "",
			updatedAt: typeof updatedAt === "string" ? updatedAt : "",
			uses: typeof uses === "number" && Number.isFinite(uses) ? uses : 0,
			lastUsedAt: typeof lastUsedAt === "string" ? lastUsedAt : null,
			...rest,
		};
	});
	return { ...(raw as HarnessFile), entries };
}

/** A kind as read from a file: a legacy name is the kind it became; anything else as it is. */
export function readKind(kind: unknown): unknown {
	return typeof kind === "string" ? (LEGACY_KINDS[kind] ?? kind) : kind;
}

export function emptyHarnessFile(): HarnessFile {
	return { version: 1, entries: [] };
}

/** Same content (kind, name, text) or both absent: what a conflict check compares. */
export function sameContent(a: HarnessEntry | null | undefined, b: HarnessEntry | null | undefined): boolean {
	if (!a || !b) return !a && !b;
	return a.kind === b.kind && a.name === b.name && a.text === b.text;
}
