export { killOnHostExit } from "./host-exit.js";
export { PYTHON_PACKAGE_DIR, REQUIREMENTS_FILE } from "./python-package.js";
export {
	type KernelProcess,
	type KernelProcessOptions,
	killLeftovers,
	OUTPUT_ACK_EVERY_CHARS,
	OUTPUT_CREDIT_COMM_ID,
	PUBLISHED_METADATA_KEY,
	signalKernel,
	spawnKernelProcess,
} from "./spawn.js";
