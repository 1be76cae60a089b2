import { deleteServerKernel, displayUrl, type KernelLocation, listServerKernels } from "prime-agent-kernel";
import type { KernelLifecycle } from "../tools/index.js";
import type { KernelServer } from "./config.js";
import { recordOwnerAlive, type ServerKernelRegistry } from "./registry.js";

/**
 * The lifecycle of a session's kernels on `server`: each one started is recorded in the registry;
 * each one ended is forgotten once the server no longer lists it. The kernel package deletes every
 * kernel it ends, but a failed delete is silent there: one still listed is deleted again here. A
 * kernel the server could not be asked about stays recorded, so `prime-agent doctor` finds it.
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
				if (await stillListed(server, location.kernelId)) await deleteServerKernel(server.options, location.kernelId);
				registry.remove(location.url, location.kernelId);
			} catch {
				// The server did not answer: the record stays for doctor.
			}
		},
	};
}

/** How often, and how far apart, the server is asked whether a kernel the kernel package deletes is gone. */
const GONE_CHECKS = 4;
const GONE_CHECK_MS = 500;

/**
 * Whether the server still lists the kernel after giving the kernel package's own delete (in
 * flight after a kill) a moment: deleting it again at once would race it.
 */
async function stillListed(server: KernelServer, kernelId: string): Promise<boolean> {
	for (let check = 1; ; check++) {
		const listed = (await listServerKernels(server.options)).some((kernel) => kernel.id === kernelId);
		if (!listed || check === GONE_CHECKS) return listed;
		await new Promise((resolve) => setTimeout(resolve, GONE_CHECK_MS));
	}
}

/**
 * Deletes the kernels this agent home left on `server` whose agent is gone (a SIGKILLed agent: its
 * kernel ended itself when the heartbeat stopped, and the server restarted it empty), and forgets
 * them; resolves with how many the server still had. Run as a session starts on that server.
 */
export async function reapLeftoverKernels(registry: ServerKernelRegistry, server: KernelServer): Promise<number> {
	const url = displayUrl(server.options.url);
	const left = registry.list().records.filter((record) => record.url === url && !recordOwnerAlive(record));
	if (left.length === 0) return 0;
	const listed = new Set((await listServerKernels(server.options)).map((kernel) => kernel.id));
	let deleted = 0;
	for (const record of left) {
		if (listed.has(record.kernelId)) {
			await deleteServerKernel(server.options, record.kernelId);
			deleted++;
		}
		registry.remove(record.url, record.kernelId);
	}
	return deleted;
}
