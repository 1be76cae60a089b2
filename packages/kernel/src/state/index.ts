export {
	readStateManifest,
	restoreKernelState,
	type SavedVariable,
	type SaveStateOptions,
	STATE_CAPS,
	STATE_MANIFEST,
	type StateManifest,
	type StateRestoreReport,
	type StateSaveReport,
	StateSnapshotError,
	saveKernelState,
	type UnsaveableVariable,
} from "./snapshot.js";
