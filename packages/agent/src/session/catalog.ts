import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { GOAL_ENTRY } from "../goals/types.js";
import { messageText } from "./messages.js";
import { foreignIdProblem, Session } from "./session.js";
import { type SessionFileScan, scanSessionFile } from "./session-file.js";
import type { SessionHolder } from "./session-lock.js";
import type { SessionEntry, SessionHeader } from "./types.js";

export interface SessionInfo {
	id: string;
	path: string;
	cwd: string;
	created: Date;
	modified: Date;
	/** Messages in the file (every branch). */
	messageCount: number;
	/** Goals set in the file (every branch), each counted once however often it changed. */
	goalCount: number;
	/** The first user message, cut to one line; with none, the first goal's objective (`goal: ...`). */
	firstMessage: string;
	parentSession?: string;
	/**
	 * A line in the middle of the file does not parse: the session cannot be resumed, only forked
	 * from its last good entry. (A torn last line is not damage: it is set aside on the next append.)
	 */
	damagedLine?: number;
	/** For a sub-agent: its id, name and depth. */
	rlmChild?: SessionHeader["rlmChild"];
	/** Sub-agent sessions it spawned (`sub-xxxxxxxx/` folders in its artifact folder), oldest first. */
	children?: SessionInfo[];
}

/** Sessions in `dir`, newest first. Files that are not sessions are skipped. */
export function listSessions(dir: string): SessionInfo[] {
	if (!existsSync(dir)) return [];
	const infos: SessionInfo[] = [];
	for (const name of readdirSync(dir)) {
		if (!name.endsWith(".jsonl")) continue;
		const info = readSessionInfo(join(dir, name));
		if (info) infos.push(info);
	}
	return infos.sort((a, b) => b.modified.getTime() - a.modified.getTime());
}

function readSessionInfo(path: string): SessionInfo | undefined {
	let scan: SessionFileScan;
	try {
		scan = scanSessionFile(path);
	} catch {
		return undefined;
	}
	const [header, ...entries] = scan.records as [SessionHeader | undefined, ...SessionEntry[]];
	// A header whose id is not this file's would lead the listing into another folder: not a session here
	// (opening it by path says why).
	if (header?.type !== "session" || foreignIdProblem(path, header.id)) return undefined;
	let messageCount = 0;
	let firstMessage = "";
	const goals = new Set<string>();
	let firstGoal = "";
	for (const record of entries) {
		if (record?.type === "custom" && record.customType === GOAL_ENTRY) {
			// The file is untrusted: a goal entry without an id or objective is not counted.
			const { id, objective } = (record.data ?? {}) as { id?: unknown; objective?: unknown };
			if (typeof id !== "string" || typeof objective !== "string") continue;
			goals.add(id);
			firstGoal ||= `goal: ${oneLine(objective)}`;
		}
		if (record?.type !== "message") continue;
		messageCount++;
		if (!firstMessage && record.message.role === "user") firstMessage = oneLine(messageText(record.message));
	}
	return {
		id: header.id,
		path,
		cwd: header.cwd,
		created: new Date(header.timestamp),
		modified: statSync(path).mtime,
		messageCount,
		goalCount: goals.size,
		firstMessage: firstMessage || firstGoal,
		parentSession: header.parentSession,
		...(scan.damagedLine !== undefined ? { damagedLine: scan.damagedLine } : {}),
		...(header.rlmChild ? { rlmChild: header.rlmChild } : {}),
		...childrenOf(join(dirname(path), header.id)),
	};
}

/** The sub-agent sessions under an artifact folder (`sub-xxxxxxxx/<id>.jsonl`), each with its own children. */
function childrenOf(artifactDir: string): { children?: SessionInfo[] } {
	if (!existsSync(artifactDir)) return {};
	const children: SessionInfo[] = [];
	for (const folder of readdirSync(artifactDir)) {
		if (!folder.startsWith("sub-")) continue;
		const dir = join(artifactDir, folder);
		let names: string[];
		try {
			names = readdirSync(dir);
		} catch {
			continue;
		}
		for (const name of names) {
			if (!name.endsWith(".jsonl")) continue;
			const info = readSessionInfo(join(dir, name));
			if (info) children.push(info);
		}
	}
	if (children.length === 0) return {};
	return { children: children.sort((a, b) => a.created.getTime() - b.created.getTime()) };
}

function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim().slice(0, 100);
}

/**
 * What a session holds, for a listing: `   3 msgs`, and its goals when it has any
 * (`   0 msgs, 1 goal`: a session with only a `/goal` set is not empty).
 */
export function describeContents(info: SessionInfo): string {
	const goals = info.goalCount > 0 ? `, ${info.goalCount} goal${info.goalCount > 1 ? "s" : ""}` : "";
	return `${String(info.messageCount).padStart(4)} msgs${goals}`;
}

/** A session and its sub-agents as indented lines (`prime-agent sessions`). */
export function describeChildren(info: SessionInfo, indent = "  "): string[] {
	const lines: string[] = [];
	for (const child of info.children ?? []) {
		const label = child.rlmChild ? `${child.rlmChild.id} "${child.rlmChild.name}"` : child.id;
		lines.push(`${indent}└ ${label}  ${child.id}  ${describeContents(child)}  ${child.path}`);
		lines.push(...describeChildren(child, `${indent}  `));
	}
	return lines;
}

/** The most recently modified session started in `cwd`. */
export function latestSession(dir: string, cwd: string): SessionInfo | undefined {
	return listSessions(dir).find((info) => info.cwd === cwd);
}

/**
 * Open the session `ref` names (see `resolveSessionRef`). A file outside the agent home's sessions
 * folder `dir` is named in advice as the user typed it (an id finds no file there), not by its id.
 * `holder`: this process runs it (locked before it is read; see `Session.open`).
 */
export function openSessionRef(
	ref: string,
	dir: string,
	cwd: string,
	options: { upToDamage?: boolean; holder?: SessionHolder } = {},
): Session {
	const path = resolveSessionRef(ref, dir, cwd);
	return Session.open(path, { ...options, ref: sessionCommandRef(ref, path, dir) });
}

/** `ref` quoted for a shell when it needs to be; undefined (the file's id names it) for a file in `dir`. */
function sessionCommandRef(ref: string, path: string, dir: string): string | undefined {
	if (realFolder(dirname(path)) === realFolder(dir)) return undefined;
	return /^[\w./@%+=:,~-]+$/.test(ref) ? ref : `'${ref.replaceAll("'", "'\\''")}'`;
}

function realFolder(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return resolve(path);
	}
}

/**
 * Resolve `--resume <id|path>`: an existing path, or a session id or unique id prefix.
 */
export function resolveSessionRef(ref: string, dir: string, cwd: string): string {
	const asPath = isAbsolute(ref) ? ref : resolve(cwd, ref);
	if ((ref.includes("/") || ref.endsWith(".jsonl")) && existsSync(asPath)) return asPath;
	const matches = listSessions(dir).filter((info) => info.id === ref || info.id.startsWith(ref));
	if (matches.length === 1) return (matches[0] as SessionInfo).path;
	if (matches.length === 0) {
		throw new UserError(
			`No session matches "${ref}".`,
			"List sessions with `prime-agent sessions --all` and pass an id (or a unique prefix) or a file path.",
			ExitCode.usage,
		);
	}
	throw new UserError(
		`"${ref}" matches ${matches.length} sessions.`,
		`Use more characters of the id: ${matches
			.slice(0, 5)
			.map((info) => info.id)
			.join(", ")}.`,
		ExitCode.usage,
	);
}
