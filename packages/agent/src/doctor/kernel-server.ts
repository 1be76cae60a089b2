import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listServerKernels, type ServerKernelModel } from "prime-agent-kernel";
import { type AgentPaths, loadSettings, type Settings } from "../home/index.js";
import {
	KERNEL_URL_ENV,
	type KernelServer,
	recordOwnerAlive,
	resolveKernelServer,
	type ServerKernelRecord,
	ServerKernelRegistry,
} from "../kernel-server/index.js";
import { SessionKernel } from "../tools/index.js";
import type { CheckResult } from "./check-result.js";

const NAME = "Kernel server";

/**
 * The Jupyter Server the kernels run on (`PRIME_AGENT_KERNEL_URL` or settings.json's `kernel.url`):
 * it answers with the token, a kernel started there runs the agent's runtime, and which kernels of
 * ours it still has. A recorded kernel the server
 * lists while the agent that started it is gone is a leftover, named with the command that deletes
 * it; one the server no longer has is forgotten. No line when no server is configured or recorded.
 */
export async function checkKernelServer(paths: AgentPaths, env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
	let settings: Settings;
	try {
		settings = loadSettings(paths.settings);
	} catch {
		return []; // reported by the settings.json check
	}
	let server: KernelServer | undefined;
	try {
		server = resolveKernelServer({ env, settings: settings.kernel, settingsPath: paths.settings });
	} catch (error) {
		const fix = (error as { hint?: string }).hint ?? "Fix the setting.";
		return [{ name: NAME, status: "fail", detail: (error as Error).message, fix }];
	}
	const registry = new ServerKernelRegistry(paths.root);
	const { records } = registry.list();
	const elsewhere = records.filter((record) => record.url !== server?.options.url);
	const results: CheckResult[] = [];
	if (server) results.push(...(await askServer(server, registry, records)));
	const urls = [...new Set(elsewhere.map((record) => record.url))];
	if (urls.length > 0) {
		const count = elsewhere.length;
		results.push({
			name: NAME,
			status: "warn",
			detail: `${count} kernel${count === 1 ? "" : "s"} started by this agent home on ${urls.join(", ")} ${count === 1 ? "is" : "are"} not known to be deleted (not the server configured now)`,
			fix: `Ask that server: ${KERNEL_URL_ENV}=<url> prime-agent doctor (with its token in the environment).`,
		});
	}
	return results;
}

async function askServer(
	server: KernelServer,
	registry: ServerKernelRegistry,
	records: ServerKernelRecord[],
): Promise<CheckResult[]> {
	const url = server.options.url;
	let running: ServerKernelModel[];
	try {
		running = await listServerKernels(server.options);
	} catch (error) {
		return [
			{
				name: NAME,
				status: "fail",
				detail: (error as Error).message,
				fix: `Start the server or fix the URL (${server.source}) and the token (${server.tokenEnv}).`,
			},
		];
	}
	const onServer = new Set(running.map((kernel) => kernel.id));
	const ours = records.filter((record) => record.url === url);
	// The server deleted these (or never kept them): nothing is left to find.
	for (const record of ours) if (!onServer.has(record.kernelId)) registry.remove(url, record.kernelId);
	const present = ours.filter((record) => onServer.has(record.kernelId));
	const inUse = present.filter(recordOwnerAlive);
	const leftovers = present.filter((record) => !recordOwnerAlive(record));
	const summary = `${url} (from ${server.source}) answers: ${running.length} kernel${running.length === 1 ? "" : "s"} running, ${inUse.length} in use by agents of this home, ${leftovers.length} left over`;
	return [
		{ name: NAME, status: "ok", detail: summary },
		await checkServerKernel(server),
		...leftovers.map(
			(record): CheckResult => ({
				name: NAME,
				status: "warn",
				detail: `kernel ${record.kernelId} (${record.kernelName}) of session ${record.session}, started ${record.startedAt} by process ${record.host.pid} on ${record.host.hostname}, is left over on ${url}`,
				fix: `Delete it: curl -X DELETE -H "Authorization: token $${server.tokenEnv}" ${url}/api/kernels/${record.kernelId}`,
			}),
		),
	];
}

/** A kernel started on the server runs the agent's runtime, as a session's would; it is deleted after. */
async function checkServerKernel(server: KernelServer): Promise<CheckResult> {
	const name = "Kernel on the server";
	const scratch = mkdtempSync(join(tmpdir(), "prime-agent-doctor-"));
	const kernel = new SessionKernel({
		cwd: scratch,
		outputDir: join(scratch, "outputs"),
		jupyterServer: server.options,
	});
	const began = Date.now();
	try {
		const run = await kernel.run("import sys; print(sys.version.split()[0], callable(edit))");
		const where = kernel.location;
		const machine = where?.kind === "jupyter-server" ? ` on ${where.hostname} in ${where.cwd}` : "";
		if (run.cell.status !== "ok" || !run.cell.stdout.includes("True"))
			return {
				name,
				status: "fail",
				detail: `started${machine}, but the agent runtime did not install: ${run.cell.error?.evalue ?? run.cell.stdout.trim()}`,
				fix: "Check that the kernelspec is an IPython kernel (ipykernel 6 or later).",
			};
		const seconds = ((Date.now() - began) / 1000).toFixed(1);
		return {
			name,
			status: "ok",
			detail: `${server.options.kernelName ?? "python3"}: Python ${run.cell.stdout.split(" ")[0]}${machine}, ready in ${seconds}s`,
		};
	} catch (error) {
		return {
			name,
			status: "fail",
			detail: `did not start: ${(error as Error).message}`,
			fix: `Fix what the message says (the kernelspec is "kernel.kernelName", its folder "kernel.cwd" in settings.json).`,
		};
	} finally {
		await kernel.dispose();
		rmSync(scratch, { recursive: true, force: true });
	}
}
