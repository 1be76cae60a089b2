export { describeExit, type KernelExit, KernelNotRunningError, KernelStartError } from "./errors.js";
export { Kernel } from "./kernel.js";
