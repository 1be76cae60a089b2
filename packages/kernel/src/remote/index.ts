export { type AttachedKernel, bootstrapCode, parseAttached } from "./bootstrap.js";
export {
	checkServer,
	deleteServerKernel,
	displayUrl,
	listServerKernels,
	type ServerKernelModel,
	serverBaseUrl,
} from "./server-api.js";
export { HEARTBEAT_COMM_ID, HOST_GONE_AFTER_MS, ServerKernelLink } from "./server-kernel-link.js";
