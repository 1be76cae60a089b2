export { describeExit, type KernelExit, KernelNotRunningError, KernelStartError } from "./kernel/errors.js";
export { Kernel } from "./kernel/kernel.js";
export { type CellOutputParts, formatCellOutput } from "./output/index.js";
export { KernelSetupError, resolveKernelPython, type SetupOptions, setupKernelEnvironment } from "./setup/index.js";
export * from "./types.js";
