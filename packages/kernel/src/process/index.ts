export { spawnGuardedGroup } from "./group-guard.js";
export { killOnHostExit } from "./host-exit.js";
export { PYTHON_PACKAGE_DIR, REQUIREMENTS_FILE } from "./python-package.js";
export {
	KERNEL_FLAGS,
	type KernelProcess,
	type KernelProcessOptions,
	OUTPUT_ACK_EVERY,
	OUTPUT_CREDIT_COMM_ID,
	OUTPUT_PROBE_MSG_TYPE,
	OUTPUT_STAMP_METADATA_KEY,
	OUTPUT_WINDOW_CHARS,
	PUBLISHED_METADATA_KEY,
	signalKernel,
	spawnKernelProcess,
} from "./spawn.js";
