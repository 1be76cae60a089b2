#!/usr/bin/env node
/** `npm run setup` (after install and build): creates or checks the kernel's Python environment. */
import { KernelSetupError, setupKernelEnvironment } from "./setup/index.js";

try {
	const started = Date.now();
	const { python, created } = await setupKernelEnvironment({ log: (line) => console.log(line) });
	console.log(
		`${created ? "Created" : "Checked"} the kernel interpreter ${python} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
	);
} catch (error) {
	console.error(error instanceof KernelSetupError ? `Setup failed: ${error.message}` : error);
	process.exitCode = 1;
}
