/** The exact, compressed, line-addressable archive of observations, one directory per session. */
export { CHUNK_BYTES } from "./chunks.js";
export { copyObservations } from "./copy.js";
export {
	defaultSessionId,
	formatObservationId,
	isSessionId,
	resolveAgentDir,
	resolveContextRoot,
	SESSION_ID_RULE,
} from "./paths.js";
export {
	continueNumbering,
	lastSequence,
	type OpenArchiveOptions,
	openSessionArchive,
	SEQUENCE_FLOOR_FILE,
	writeAtomically,
} from "./session-archive.js";
export {
	ArchiveError,
	type ArchiveWriter,
	type ObservationFacts,
	type ReadLinesOptions,
	type SessionArchive,
} from "./types.js";
