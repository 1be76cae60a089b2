export { KERNEL_MODULES, type KernelPythonProblem, kernelPythonProblem, requireKernelPython } from "./check-python.js";
export { KernelSetupError, SETUP_HINT } from "./errors.js";
export { type InstalledKernelspec, installKernelspec, type KernelspecOptions } from "./kernelspec.js";
export { agentDir, kernelVenvDir, venvPython } from "./locations.js";
export { resolveKernelPython } from "./resolve-python.js";
export { pinnedRequirements, type SetupOptions, setupKernelEnvironment } from "./setup-environment.js";
