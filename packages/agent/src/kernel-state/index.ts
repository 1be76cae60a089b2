/** Kernel variables across sessions: debounced dill snapshots, restore on resume, and the notes telling the model. */
export { restoreNotice, resumeNote, unreadableStateNote } from "./notices.js";
export { planStateRestore, type ResumePlan } from "./resume.js";
export {
	INJECTED_HANDLES,
	kernelStateDir,
	type StateSaveOutcome,
	StateSaver,
	type StateSaverOptions,
} from "./state-saver.js";
