/** The `ipython` tool and the per-session kernel behind it. */
export { normalizeCellCode } from "./cell-code.js";
export { createIpythonTool, type IpythonDetails, type IpythonParameters, ipythonParameters } from "./ipython-tool.js";
export {
	type CellRun,
	cellOutputDir,
	type FileDiff,
	type KernelLifecycle,
	type KernelStatus,
	RUNTIME_PYTHON_DIR,
	SessionKernel,
	type SessionKernelOptions,
	type StillBusyChoice,
} from "./session-kernel.js";
