/**
 * Kernel variables across sessions: debounced dill snapshots sealed by the agent home and kept per
 * session entry, restore on resume of the branch point's own state (only of this home's own
 * snapshots), the last snapshot back after a restart, and the notes telling the model.
 */
export { cellEntry, type EntryTree } from "./cell-entry.js";
export {
	noSnapshotHereNote,
	RESUMED_FROM,
	restartRestoredFrom,
	restoreNotice,
	resumeNote,
	type SnapshotPoint,
	unreadableStateNote,
} from "./notices.js";
export { type BranchEntry, planStateRestore, type RestoreSource, type ResumePlan, type StateSource } from "./resume.js";
export { STATE_SEAL, StateSeal, stateKeyPath } from "./seal.js";
export {
	INJECTED_HANDLES,
	kernelStateDir,
	type StateSaveOutcome,
	StateSaver,
	type StateSaverOptions,
} from "./state-saver.js";
