export {
	readStateManifest,
	type SavedVariable,
	type SaveStateOptions,
	STATE_CAPS,
	STATE_ENTRIES,
	STATE_MANIFEST,
	type StateManifest,
	type StateRestoreReport,
	type StateSaveReport,
	StateSnapshotError,
	stateManifestPath,
	type UnsaveableVariable,
} from "./manifest.js";
export { restoreKernelState, saveKernelState } from "./snapshot.js";
