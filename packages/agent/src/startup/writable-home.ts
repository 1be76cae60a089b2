import { accessSync, constants, existsSync, lstatSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ExitCode, UserError } from "../errors.js";

/**
 * Refuses to start when sessions cannot be saved under the agent home: its sessions folder (or the
 * nearest folder above it that exists, since it is made with the first answer) must be a folder this
 * user can write. Checked before any model call, so a read-only or broken home is not reported
 * later as a failed model call with an answer lost.
 */
export function requireWritableSessions(sessionsDir: string, home: string): void {
	let folder = sessionsDir;
	while (!exists(folder) && dirname(folder) !== folder) folder = dirname(folder);
	let problem: string | null = null;
	try {
		if (!existsSync(folder)) problem = `${folder} is a link to nothing`;
		else if (!statSync(folder).isDirectory()) problem = `${folder} is not a folder`;
		// Making a folder inside needs both: writing it and passing through it.
		else accessSync(folder, constants.W_OK | constants.X_OK);
	} catch (error) {
		problem = `${folder} cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
	}
	if (problem === null) return;
	throw new UserError(
		`Sessions cannot be saved in the agent home ${home}: ${problem}.`,
		"Make it a writable folder, or point PRIME_AGENT_DIR at one.",
		ExitCode.usage,
	);
}

/** Whether anything is at `path`, a link to nothing included (it stands in the way of a folder there). */
function exists(path: string): boolean {
	try {
		lstatSync(path);
		return true;
	} catch {
		return false;
	}
}
