import { existsSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative } from "node:path";
import { readStateManifest, STATE_MANIFEST } from "prime-agent-kernel";
import { resumeNote, unreadableStateNote } from "./notices.js";
import type { StateSeal } from "./seal.js";
import { kernelStateDir } from "./state-saver.js";

export interface ResumePlan {
	/** Snapshot folder to restore when the kernel first starts; absent when there is nothing to restore. */
	restoreFrom?: string;
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
}

/**
 * What a picked-up session does with its snapshot (`<folder of the file>/<id>/kernel-state`).
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
		const manifest = readStateManifest(own.dir);
		if (!manifest) return {};
		if (manifest.variables.length === 0 && Object.keys(manifest.imports).length === 0) return {};
		if (!source.seal.check(own.dir)) {
			return {
				refused: `The kernel state in ${own.dir} was not loaded: it carries no seal of this agent home (it was saved elsewhere or by an older prime-agent, or changed since), and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
			};
		}
		return { restoreFrom: own.dir, note: resumeNote(manifest) };
	} catch (error) {
		const reason = (error as Error).message;
		return {
			note: unreadableStateNote(reason),
			refused: `The kernel state saved for ${source.sessionFile} could not be read, so it was not loaded (${reason.replace(/\.$/, "")}). The conversation continues in an empty kernel.`,
		};
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
