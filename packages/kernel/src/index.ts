export { describeExit, Kernel, type KernelExit, KernelNotRunningError, KernelStartError } from "./kernel/index.js";
export { type CellOutputParts, formatCellOutput } from "./output/index.js";
export { spawnGuardedGroup } from "./process/index.js";
export {
	deleteServerKernel,
	displayUrl,
	listServerKernels,
	type ServerKernelModel,
} from "./remote/index.js";
export {
	type InstalledKernelspec,
	installKernelspec,
	type KernelPythonProblem,
	KernelSetupError,
	type KernelspecOptions,
	kernelPythonProblem,
	requireKernelPython,
	resolveKernelPython,
	type SetupOptions,
	setupKernelEnvironment,
} from "./setup/index.js";
export * from "./state/index.js";
export * from "./types.js";
