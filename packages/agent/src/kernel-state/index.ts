/**
 * Kernel variables across sessions: debounced dill snapshots sealed by the agent home, restore on
 * resume (only of this home's own snapshots), and the notes telling the model.
 */
export { restoreNotice, resumeNote, unreadableStateNote } from "./notices.js";
export { planStateRestore, type RestoreSource, type ResumePlan } from "./resume.js";
export { STATE_SEAL, StateSeal, stateKeyPath } from "./seal.js";
export {
	INJECTED_HANDLES,
	kernelStateDir,
	type StateSaveOutcome,
	StateSaver,
	type StateSaverOptions,
} from "./state-saver.js";
