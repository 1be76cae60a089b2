import { resolveKernelPython } from "prime-agent-kernel";

/**
 * The interpreter for tests that start a real kernel, resolved from the real environment before a
 * test points PRIME_AGENT_DIR at a temp dir. Missing it is a loud failure, never a skip.
 */
export function kernelPythonForTests(): string {
	try {
		return resolveKernelPython(process.env);
	} catch (error) {
		throw new Error(
			`These tests start a real IPython kernel and need its Python environment: ${(error as Error).message}\n` +
				"Create it with `npx tsc -b && node packages/kernel/dist/setup-cli.js`, or set PRIME_AGENT_KERNEL_PYTHON " +
				"to a Python 3.11 venv with ipykernel==7.4.0 dill==0.4.1.",
		);
	}
}
