import type { KernelLocation } from "prime-agent-kernel";
import { ExitCode, UserError } from "../errors.js";
import { type KernelServer, reapLeftoverKernels, type ServerKernelRegistry } from "../kernel-server/index.js";
import type { SessionKernel } from "../tools/index.js";

/** Start the session's kernel on its server now, or a `UserError` saying what to fix. */
export async function startServerKernel(kernel: SessionKernel, server: KernelServer): Promise<KernelLocation> {
	try {
		return await kernel.ready();
	} catch (error) {
		// Whatever the message quotes (a URL the client built), the token is not shown.
		const token = server.options.token;
		const why = token ? (error as Error).message.replaceAll(token, "<token>") : (error as Error).message;
		throw new UserError(
			`The kernel could not start on the Jupyter Server ${server.options.url} (from ${server.source}): ${why}`,
			`Check the server, the URL and the token in ${server.tokenEnv}; \`prime-agent doctor\` asks the server. \`--kernel-url local\` runs the kernel on this machine.`,
			ExitCode.kernel,
		);
	}
}

/**
 * Delete the kernels agents of this home killed outright left on the server (it answered just
 * now); `notices` says how many. A server that refuses is not this run's problem: nothing is said.
 */
export async function reapLeftovers(
	registry: ServerKernelRegistry,
	server: KernelServer,
	location: KernelLocation,
	notices: string[],
): Promise<void> {
	const reaped = await reapLeftoverKernels(registry, server).catch(() => 0);
	if (reaped > 0)
		notices.push(
			`Deleted ${reaped} kernel${reaped === 1 ? "" : "s"} an earlier agent of this home left on ${location.kind === "jupyter-server" ? location.url : server.options.url}.`,
		);
}
