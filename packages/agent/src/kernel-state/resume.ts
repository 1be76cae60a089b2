import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import {
	readStateManifest,
	STATE_ENTRIES,
	STATE_MANIFEST,
	type StateManifest,
	stateManifestPath,
} from "prime-agent-kernel";
import { IPYTHON_TOOL_NAME } from "../tools/removed-tools.js";
import { noSnapshotHereNote, resumeNote, type SnapshotPoint, unreadableStateNote } from "./notices.js";
import type { StateSeal } from "./seal.js";
import { kernelStateDir } from "./state-saver.js";

/** A snapshot to load: a folder, and the entry whose kept manifest it is (absent: the latest save). */
export interface StateSource {
	dir: string;
	entry?: string;
}

export interface ResumePlan {
	/** Snapshot to restore when the kernel first starts; absent when there is nothing to restore. */
	restoreFrom?: StateSource;
	/** Note for the model about the kernel it will get; absent when there is no snapshot to speak of. */
	note?: string;
	/** For the user: a snapshot was found but is not loaded, and why. */
	refused?: string;
}

/** The session picked up, and what decides whether its kernel state may be loaded. */
export interface RestoreSource {
	/** Its file, whose header id was checked to be a session id matching the file name (`Session.open`). */
	sessionFile: string;
	sessionId: string;
	/** The agent home's sessions folder. */
	sessionsDir: string;
	seal: StateSeal;
	/** The entries from the root to the point the session continues from (its leaf, or `--at`). */
	branch: readonly BranchEntry[];
	/** The session continues from a point other than its file's end (`--at`). */
	branched: boolean;
}

/** What the plan reads of a session entry: a cell's result is an `ipython` tool result message. */
export interface BranchEntry {
	id: string;
	type: string;
	message?: { role: string; toolName?: string };
}

/**
 * What a picked-up session does with its snapshot (`<folder of the file>/<id>/kernel-state`): the
 * state kept for the last entry of the branch that has one, so a session continued from an earlier
 * point gets that point's variables, never those of a later point or of another branch. Without
 * such an entry it gets the latest save only when that is an older prime-agent's (which kept no
 * entries) and the session continues from its end; otherwise an empty kernel, and a note says so.
 * Loading a snapshot runs the code its pickles hold, so it is loaded only when all of these hold:
 * the session file is in the agent home's sessions folder (its real path: a symbolic link there to
 * a file elsewhere does not count), the snapshot folder is really that session's own (no symbolic
 * link leads it elsewhere), and this agent home sealed its manifest (`StateSeal`). A session from
 * anywhere else (a shared repository, a download) resumes its conversation in an empty kernel.
 */
export function planStateRestore(source: RestoreSource): ResumePlan {
	const stateDir = kernelStateDir(join(dirname(source.sessionFile), source.sessionId));
	if (!existsSync(join(stateDir, STATE_MANIFEST))) return {};
	const own = ownStateDir(source, stateDir);
	if ("outside" in own) {
		return {
			refused: `The kernel state saved for ${source.sessionFile} was not loaded: ${own.outside}, and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
		};
	}
	try {
		const point = keptPoint(own.dir, source.branch);
		let manifest: StateManifest | undefined;
		if (point) {
			manifest = readStateManifest(own.dir, point.entry);
		} else {
			manifest = readStateManifest(own.dir);
			// Only an older prime-agent's snapshot (no entries kept) is the end's, and only a resume of the end gets it.
			const keptEntries = existsSync(join(own.dir, STATE_ENTRIES)) || manifest?.entry !== undefined;
			if (manifest && (keptEntries || source.branched)) {
				return isEmpty(manifest) ? {} : { note: noSnapshotHereNote() };
			}
		}
		if (!manifest || isEmpty(manifest)) return {};
		if (!source.seal.check(own.dir, point?.entry)) {
			return {
				refused: `The kernel state in ${own.dir} was not loaded: it carries no seal of this agent home (it was saved elsewhere or by an older prime-agent, or changed since), and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
			};
		}
		return {
			restoreFrom: { dir: own.dir, ...(point ? { entry: point.entry } : {}) },
			note: resumeNote(manifest, point),
		};
	} catch (error) {
		const reason = (error as Error).message;
		return {
			note: unreadableStateNote(reason),
			refused: `The kernel state saved for ${source.sessionFile} could not be read, so it was not loaded (${reason.replace(/\.$/, "")}). The conversation continues in an empty kernel.`,
		};
	}
}

const isEmpty = (manifest: StateManifest) =>
	manifest.variables.length === 0 && Object.keys(manifest.imports).length === 0;

const isCell = (entry: BranchEntry) =>
	entry.type === "message" && entry.message?.role === "toolResult" && entry.message.toolName === IPYTHON_TOOL_NAME;

/** The last entry of the branch with a kept manifest, and where it stands among the branch's cells. */
function keptPoint(dir: string, branch: readonly BranchEntry[]): SnapshotPoint | undefined {
	let cellsAfter = 0;
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index] as BranchEntry;
		if (hasKeptManifest(dir, entry.id)) {
			const cell = branch.slice(0, index + 1).filter(isCell).length;
			return { entry: entry.id, cell, cellsAfter };
		}
		if (isCell(entry)) cellsAfter++;
	}
	return undefined;
}

function hasKeptManifest(dir: string, entry: string): boolean {
	try {
		return existsSync(stateManifestPath(dir, entry));
	} catch {
		// An id that cannot name a file (a hand-edited session) has no snapshot.
		return false;
	}
}

/** The snapshot folder's real path when it is the session's own inside the sessions folder; else why not. */
function ownStateDir(source: RestoreSource, stateDir: string): { dir: string } | { outside: string } {
	const notInHome = {
		outside: `that session file is not in this agent home's sessions folder (${source.sessionsDir})`,
	};
	try {
		const sessions = realpathSync(source.sessionsDir);
		const file = realpathSync(source.sessionFile);
		const inside = relative(sessions, file);
		if (inside === "" || inside.split(/[\\/]/)[0] === ".." || isAbsolute(inside)) return notInHome;
		const expected = kernelStateDir(join(dirname(file), source.sessionId));
		const real = realpathSync(stateDir);
		if (real !== expected) return { outside: `its folder is a symbolic link to ${real}, not the session's own folder` };
		return { dir: expected };
	} catch {
		return notInHome;
	}
}
