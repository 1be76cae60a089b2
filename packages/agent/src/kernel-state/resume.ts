import { readStateManifest } from "prime-agent-kernel";
import { resumeNote, unreadableStateNote } from "./notices.js";

export interface ResumePlan {
	/** Snapshot folder to restore when the kernel first starts; absent when there is nothing to restore. */
	restoreFrom?: string;
	/** Note for the model about the kernel it will get; absent when there is no snapshot at all. */
	note?: string;
}

/** What a picked-up session does with the snapshot in `stateDir`: restore it, or say it is unreadable. */
export function planStateRestore(stateDir: string): ResumePlan {
	try {
		const manifest = readStateManifest(stateDir);
		if (!manifest) return {};
		if (manifest.variables.length === 0 && Object.keys(manifest.imports).length === 0) return {};
		return { restoreFrom: stateDir, note: resumeNote(manifest) };
	} catch (error) {
		return { note: unreadableStateNote((error as Error).message) };
	}
}
