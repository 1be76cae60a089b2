import type { TestProject } from "vitest/node";
import { startJupyterServer } from "./jupyter-server.js";

declare module "vitest" {
	export interface ProvidedContext {
		/** The conformance project's Jupyter Server (see `kernels.ts`). */
		jupyterServer: { url: string; token: string; root: string };
	}
}

/**
 * Starts the loopback Jupyter Server the kernel tests of the "kernel-on-jupyter-server" project run
 * their kernels on (one for the whole run: a server takes seconds to start on a loaded machine),
 * and stops it, with every kernel it still runs, after them.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
	const server = await startJupyterServer();
	project.provide("jupyterServer", { url: server.url, token: server.token, root: server.root });
	return () => server.stop();
}
