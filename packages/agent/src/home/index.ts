/**
 * The agent home: `PRIME_AGENT_DIR` (default `~/.prime/agent`) holding settings.json, auth.json,
 * models.json and sessions/. Everything created here is readable by the user only; a home (or a
 * file or folder of it that runs code or holds keys) other users can write is fixed or refused
 * (`secureHomeFolders`).
 */
export {
	DiskWriteError,
	diskOf,
	diskWriteError,
	formatBytes,
	isDiskRefusal,
	probeWrite,
	removeLeftoverTempFiles,
	writeFileAtomically,
	writingTo,
} from "./disk.js";
export {
	ensurePrivateDir,
	jsonProblem,
	PRIVATE_DIR_MODE,
	PRIVATE_FILE_MODE,
	readJsonFile,
	writePrivateJson,
} from "./files.js";
export { type AgentPaths, agentDir, agentPaths, STATE_KEY_FILE, TRUST_FILE } from "./paths.js";
export { kernelEnvKeep, loadSettings, SETTINGS_KEYS, type Settings, THINKING_LEVELS } from "./settings.js";
export {
	access,
	chmodFix,
	type FolderFinding,
	inspectHomeFolders,
	octal,
	secureHomeFolders,
} from "./strict-modes.js";
