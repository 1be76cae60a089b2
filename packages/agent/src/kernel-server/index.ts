/**
 * Kernels on a Jupyter Server (or Enterprise Gateway): which server a session's kernels run on
 * (`--kernel-url`, `PRIME_AGENT_KERNEL_URL`, settings.json's `kernel`), and the agent home's record
 * of the kernels started there until the server deleted them.
 */
export {
	chooseKernelServer,
	DEFAULT_TOKEN_ENV,
	KERNEL_URL_ENV,
	type KernelServer,
	type KernelServerInput,
	LOCAL_KERNEL,
	resolveKernelServer,
} from "./config.js";
export { reapLeftoverKernels, serverKernelLifecycle } from "./lifecycle.js";
export { recordOwnerAlive, SERVER_KERNELS_DIR, type ServerKernelRecord, ServerKernelRegistry } from "./registry.js";
