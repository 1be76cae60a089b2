import { deleteServerKernel, type KernelLocation } from "prime-agent-kernel";
import type { KernelLifecycle } from "../tools/index.js";
import type { KernelServer } from "./config.js";
import type { ServerKernelRegistry } from "./registry.js";

/**
 * The lifecycle of a session's kernels on `server`: each one started is recorded in the registry;
 * each one ended is deleted through the API (again, if the kernel package did already: a kill cannot
 * wait for its delete) and forgotten once the server no longer has it. A kernel the server could
 * not be asked about stays recorded, so `prime-agent doctor` finds it if it is left over.
 */
export function serverKernelLifecycle(
	registry: ServerKernelRegistry,
	server: KernelServer,
	session: () => string,
): KernelLifecycle {
	return {
		started(location: KernelLocation) {
			if (location.kind !== "jupyter-server") return;
			try {
				registry.add({
					url: location.url,
					kernelId: location.kernelId,
					kernelName: location.kernelName,
					session: session(),
				});
			} catch {
				// An unwritable agent home loses only the record: the kernel is still deleted at the end.
			}
		},
		async ended(location: KernelLocation) {
			if (location.kind !== "jupyter-server") return;
			try {
				await deleteServerKernel(server.options, location.kernelId);
				registry.remove(location.url, location.kernelId);
			} catch {
				// The server did not answer: the record stays for doctor.
			}
		},
	};
}
