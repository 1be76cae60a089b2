import { chmodSync, readFileSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { ExitCode, UserError } from "../errors.js";
import { type AgentPaths, STATE_KEY_FILE, TRUST_FILE } from "./paths.js";

/** Group and other may not write it: code, configuration and the folders above them. */
const NO_WRITE = 0o022;
/** Group and other may not read, write or enter it: keys, conversations, sockets (made 0600/0700). */
const PRIVATE = 0o077;

/**
 * As ssh's StrictModes: what in the agent home another user must never write, since whoever can
 * write it can plant a session that is resumed, code that runs (skills, extensions, packages, a
 * harness, an MCP server command, a model's base URL), approvals of a project's code, or replace the
 * kernel's interpreter or a socket; and what they must not even read (keys, conversations). One row
 * each: its path, what it is called, and the permission bits group and other may not have (a fix
 * clears just those). Only the home and what it holds are checked, not the folders above it.
 */
function guarded(paths: AgentPaths): { path: string; label: string; forbidden: number }[] {
	const at = (name: string) => join(paths.root, name);
	return [
		// The home first: whoever can write it could replace everything below.
		{ path: paths.root, label: "agent home", forbidden: NO_WRITE },
		{ path: paths.sessions, label: "sessions folder", forbidden: PRIVATE },
		{ path: paths.daemon, label: "daemon folder", forbidden: PRIVATE },
		{ path: at("skills"), label: "skills folder", forbidden: NO_WRITE },
		{ path: at("extensions"), label: "extensions folder", forbidden: NO_WRITE },
		{ path: at("packages"), label: "packages folder", forbidden: NO_WRITE },
		{ path: at("harness"), label: "harness folder", forbidden: NO_WRITE },
		{ path: paths.settings, label: "settings file", forbidden: NO_WRITE },
		{ path: paths.models, label: "models file", forbidden: NO_WRITE },
		{ path: at("mcp.json"), label: "MCP servers file", forbidden: NO_WRITE },
		{ path: at(TRUST_FILE), label: "project approvals file", forbidden: NO_WRITE },
		{ path: paths.auth, label: "keys file", forbidden: PRIVATE },
		{ path: at(STATE_KEY_FILE), label: "kernel-state key", forbidden: PRIVATE },
	];
}

/** What was found wrong with one guarded file or folder. */
export type FolderFinding =
	/** Group or others have a `forbidden` bit, and we may change its mode: `fixedMode` is the mode it gets. */
	| { kind: "exposed"; path: string; label: string; mode: number; fixedMode: number; forbidden: number }
	/** It belongs to another user (not us, not root): refused, never changed. */
	| { kind: "foreign"; path: string; label: string; owner: string }
	/** Group or others have a `forbidden` bit and it belongs to root (and we are not root): it cannot be fixed here. */
	| { kind: "root-exposed"; path: string; label: string; mode: number; forbidden: number };

/** What is wrong with the guarded files and folders that exist (a missing one is made private when needed). */
export function inspectHomeFolders(paths: AgentPaths): FolderFinding[] {
	const uid = process.getuid?.();
	// Without user ids (Windows) there is nothing to compare with.
	if (uid === undefined) return [];
	const findings: FolderFinding[] = [];
	for (const { path, label, forbidden } of guarded(paths)) {
		let stat: ReturnType<typeof statSync>;
		try {
			stat = statSync(path);
		} catch {
			continue;
		}
		const mode = stat.mode & 0o7777;
		if (stat.uid !== uid && stat.uid !== 0) findings.push({ kind: "foreign", path, label, owner: userName(stat.uid) });
		else if ((mode & forbidden) === 0) continue;
		else if (stat.uid !== uid) findings.push({ kind: "root-exposed", path, label, mode, forbidden });
		else findings.push({ kind: "exposed", path, label, mode, fixedMode: mode & ~forbidden, forbidden });
	}
	return findings;
}

/**
 * Before anything is read from or written to the agent home: a guarded file or folder of ours that
 * others may write (or, for a private one, read) loses those permissions, with one `warn` line naming
 * it and both modes; one that belongs to another user (or to root and is open to others) is refused
 * with a UserError.
 */
export function secureHomeFolders(paths: AgentPaths, warn: (line: string) => void): void {
	for (const finding of inspectHomeFolders(paths)) {
		if (finding.kind === "exposed") {
			chmodSync(finding.path, finding.fixedMode);
			const privately = finding.forbidden === PRIVATE ? " (for you alone, as prime-agent makes it)" : "";
			warn(
				`Warning: other users could ${access(finding.mode, finding.forbidden)} the ${finding.label} ${finding.path} (mode ${octal(finding.mode)}); its mode is now ${octal(finding.fixedMode)}${privately}.`,
			);
			continue;
		}
		if (finding.kind === "foreign") {
			const me = myName();
			throw new UserError(
				`The ${finding.label} ${finding.path} belongs to ${finding.owner}, not to you (${me}): that user could change your sessions and settings and what the agent runs, so it is not used.`,
				`Point PRIME_AGENT_DIR at a folder of your own, or have it handed to you (\`sudo chown -R ${me} ${finding.path}\`).`,
				ExitCode.usage,
			);
		}
		throw new UserError(
			`Other users can ${access(finding.mode, finding.forbidden)} the ${finding.label} ${finding.path} (mode ${octal(finding.mode)}), and it belongs to root, so it is not used.`,
			`Point PRIME_AGENT_DIR at a folder of your own, or have root run \`${chmodFix(finding.forbidden)} ${finding.path}\`.`,
			ExitCode.usage,
		);
	}
}

/** "write", "read", or "read and write": what the `forbidden` bits set in `mode` allow others (entering a folder counts as reading). */
export function access(mode: number, forbidden: number): string {
	const read = (mode & forbidden & 0o055) !== 0;
	const write = (mode & forbidden & 0o022) !== 0;
	return read && write ? "read and write" : write ? "write" : "read";
}

/** The chmod command (without its path) that clears `forbidden`. */
export function chmodFix(forbidden: number): string {
	return forbidden === PRIVATE ? "chmod go-rwx" : "chmod go-w";
}

/** `0755`-style. */
export function octal(mode: number): string {
	return `0${mode.toString(8).padStart(3, "0")}`;
}

/** This process's user name (its id where it has none). */
function myName(): string {
	try {
		return userInfo().username;
	} catch {
		return String(process.getuid?.());
	}
}

/** The user's name from /etc/passwd, with the id; the id alone where there is no such line. */
function userName(uid: number): string {
	try {
		for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
			const [name, , id] = line.split(":");
			if (name && id === String(uid)) return `${name} (uid ${uid})`;
		}
	} catch {
		// No passwd file (a container without one): the id says enough.
	}
	return `uid ${uid}`;
}
