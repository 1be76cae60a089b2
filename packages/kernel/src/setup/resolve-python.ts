import { accessSync, constants } from "node:fs";
import { KernelSetupError, SETUP_HINT } from "./errors.js";
import { agentDir, kernelVenvDir, venvPython } from "./locations.js";

function isExecutable(path: string): boolean {
	try {
		accessSync(path, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/**
 * The kernel interpreter: `PRIME_AGENT_KERNEL_PYTHON` if set, else the setup venv at
 * `<PRIME_AGENT_DIR or ~/.prime/agent>/kernel-venv`. Throws KernelSetupError (saying how to run
 * setup) when that interpreter does not exist or cannot be executed.
 */
export function resolveKernelPython(env: NodeJS.ProcessEnv = process.env): string {
	const override = env.PRIME_AGENT_KERNEL_PYTHON;
	if (override) {
		if (isExecutable(override)) return override;
		throw new KernelSetupError(
			`PRIME_AGENT_KERNEL_PYTHON is set to ${override}, which is not an executable file. ` +
				`Fix or unset it. ${SETUP_HINT}`,
		);
	}
	const python = venvPython(kernelVenvDir(agentDir(env)));
	if (isExecutable(python)) return python;
	throw new KernelSetupError(
		`The kernel's Python environment is not set up (no interpreter at ${python}). ${SETUP_HINT}`,
	);
}
