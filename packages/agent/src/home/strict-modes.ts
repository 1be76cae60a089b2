import { chmodSync, readFileSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { ExitCode, UserError } from "../errors.js";
import type { AgentPaths } from "./paths.js";

/**
 * As ssh's StrictModes: the folders another user must never write, since whoever can write them can
 * plant a session that is resumed, replace the kernel's interpreter or a socket, or read what lands
 * there. Only the agent home itself and its sessions and daemon folders are checked, not the folders
 * above the home.
 */
interface GuardedFolder {
	path: string;
	label: string;
	/** The mode a fix sets; undefined: the mode without group and other write. */
	fixedMode?: number;
}

/** What was found wrong with one guarded folder. */
export type FolderFinding =
	/** Group or others may write it, and we may change its mode: `fixedMode` is the mode it gets. */
	| { kind: "writable"; path: string; label: string; mode: number; fixedMode: number }
	/** It belongs to another user (not us, not root): refused, never changed. */
	| { kind: "foreign"; path: string; label: string; owner: string }
	/** Others may write it and it belongs to root (and we are not root): it cannot be fixed here. */
	| { kind: "root-writable"; path: string; label: string; mode: number };

/** The folders checked, in order: the home first (whoever can write it could replace the others). */
function guardedFolders(paths: AgentPaths): GuardedFolder[] {
	return [
		{ path: paths.root, label: "agent home" },
		{ path: paths.sessions, label: "sessions folder" },
		{ path: paths.daemon, label: "daemon folder", fixedMode: 0o700 },
	];
}

/** What is wrong with the guarded folders that exist (a missing one is made private when needed). */
export function inspectHomeFolders(paths: AgentPaths): FolderFinding[] {
	const uid = process.getuid?.();
	// Without user ids (Windows) there is nothing to compare with.
	if (uid === undefined) return [];
	const findings: FolderFinding[] = [];
	for (const { path, label, fixedMode } of guardedFolders(paths)) {
		let stat: ReturnType<typeof statSync>;
		try {
			stat = statSync(path);
		} catch {
			continue;
		}
		const mode = stat.mode & 0o7777;
		if (stat.uid !== uid && stat.uid !== 0) findings.push({ kind: "foreign", path, label, owner: userName(stat.uid) });
		else if ((mode & 0o022) === 0) continue;
		else if (stat.uid !== uid) findings.push({ kind: "root-writable", path, label, mode });
		else findings.push({ kind: "writable", path, label, mode, fixedMode: fixedMode ?? mode & ~0o022 });
	}
	return findings;
}

/**
 * Before anything is read from or written to the agent home: a guarded folder of ours that others
 * may write gets their write permission removed, with one `warn` line naming it and both modes; one
 * that belongs to another user (or to root and is writable by others) is refused with a UserError.
 */
export function secureHomeFolders(paths: AgentPaths, warn: (line: string) => void): void {
	for (const finding of inspectHomeFolders(paths)) {
		if (finding.kind === "writable") {
			chmodSync(finding.path, finding.fixedMode);
			warn(
				`Warning: other users could write the ${finding.label} ${finding.path} (mode ${octal(finding.mode)}); its mode is now ${octal(finding.fixedMode)}.`,
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
			`Other users can write the ${finding.label} ${finding.path} (mode ${octal(finding.mode)}), and it belongs to root, so it is not used.`,
			`Point PRIME_AGENT_DIR at a folder of your own, or have root run \`chmod go-w ${finding.path}\`.`,
			ExitCode.usage,
		);
	}
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
