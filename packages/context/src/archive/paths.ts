import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";
import { ArchiveError } from "./types.js";

/**
 * The storage root: `PRIME_CONTEXT_HOME` when set, else `<PRIME_AGENT_DIR or ~/.prime/agent>/prime-context`.
 * Sessions live under `<root>/sessions/<session-id>/`.
 */
export function resolveContextRoot(env: NodeJS.ProcessEnv = process.env): string {
	const explicit = env.PRIME_CONTEXT_HOME?.trim();
	if (explicit) return resolve(explicit);
	return join(resolveAgentDir(env), "prime-context");
}

/** The agent's home directory: `PRIME_AGENT_DIR` when set, else `~/.prime/agent`. */
export function resolveAgentDir(env: NodeJS.ProcessEnv = process.env): string {
	const explicit = env.PRIME_AGENT_DIR?.trim();
	if (explicit) return resolve(explicit);
	return join(homedir(), ".prime", "agent");
}

/**
 * One session per working directory: the directory's name (made filesystem-safe) plus a short digest
 * of its absolute path, so two checkouts named alike never share a session and the id never changes.
 */
export function defaultSessionId(cwd: string = process.cwd()): string {
	const absolute = resolve(cwd);
	const name =
		basename(absolute)
			.replace(/[^A-Za-z0-9._-]+/g, "-")
			.replace(/^[.-]+/, "")
			.slice(0, 40) || "session";
	const digest = createHash("sha256").update(absolute).digest("hex").slice(0, 12);
	return `${name}-${digest}`;
}

const SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/** What a session id may be, in words (for messages that refuse one). */
export const SESSION_ID_RULE = "1-128 characters from A-Z a-z 0-9 . _ - (not starting with . or -)";

/**
 * Session ids become directory names, so only a safe alphabet is accepted: never a path separator
 * and never `.` or `..`. Hosts naming folders by their own session ids check them with this too.
 */
export function isSessionId(sessionId: string): boolean {
	return SESSION_ID.test(sessionId);
}

export function checkSessionId(sessionId: string): string {
	if (!isSessionId(sessionId)) {
		throw new ArchiveError(`invalid session id ${JSON.stringify(sessionId)}: use ${SESSION_ID_RULE}`);
	}
	return sessionId;
}

export const OBSERVATION_ID = /^obs_(\d{6,})$/;
const ID_DIGITS = 6;

export function formatObservationId(sequence: number): string {
	return `obs_${String(sequence).padStart(ID_DIGITS, "0")}`;
}

/** The sequence number of a well-formed id, or null. */
export function observationSequence(id: string): number | null {
	const match = OBSERVATION_ID.exec(id);
	return match ? Number(match[1]) : null;
}
