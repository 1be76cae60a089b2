export { killOnHostExit } from "./host-exit.js";
export { PYTHON_PACKAGE_DIR, REQUIREMENTS_FILE } from "./python-package.js";
export { type KernelProcess, type KernelProcessOptions, signalKernel, spawnKernelProcess } from "./spawn.js";
