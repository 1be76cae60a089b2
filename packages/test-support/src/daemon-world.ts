import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	type AgentInfo,
	connectSupervisor,
	daemonContext,
	daemonPaths,
	isSameProcess,
	readWorkerRecord,
	type SupervisorClient,
	workerKeys,
} from "prime-agent/daemon";
import { spawnCliText, type TextCliProcess } from "./cli-process.js";
import { kernelPythonForTests } from "./kernel-python.js";
import { type LoopbackServer, openAiCompletionsServer, type ScriptedReply } from "./loopback-servers.js";
import { makeTempWorld, type TempWorld } from "./temp-home.js";

/** A temp world whose sessions run in the daemon, on a loopback model (`local/coder`). */
export interface DaemonWorld extends TempWorld {
	server: LoopbackServer;
	cli(args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
	agents(): Promise<AgentInfo[]>;
	/** Kill (SIGKILL) the supervisor and every worker this world started, then remove the world. */
	teardown(): Promise<void>;
}

export async function makeDaemonWorld(script: ScriptedReply[], env: Record<string, string> = {}): Promise<DaemonWorld> {
	const server = await openAiCompletionsServer(script);
	const world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(), ...env });
	delete world.env.PRIME_AGENT_IN_PROCESS;
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
	// Command lines still running when the test ends (it failed or timed out) are killed by teardown.
	const running = new Set<TextCliProcess>();
	const cli = async (args: string[], input = "") => {
		const run = spawnCliText(args, world.project, world.env);
		running.add(run);
		run.child.stdin?.end(input);
		const code = await run.exitCode();
		running.delete(run);
		return { code, stdout: run.stdout(), stderr: run.stderr() };
	};
	return {
		...world,
		server,
		cli,
		agents: async () => {
			// Straight to the supervisor (starting it as the command line would): faster than `agents --json`.
			const supervisor = await connectSupervisor(daemonContext(world.env));
			try {
				const reply = await (supervisor as SupervisorClient).request({ type: "list" });
				if (!reply.ok) throw new Error(`list failed: ${reply.message}`);
				return reply.data as AgentInfo[];
			} finally {
				supervisor?.close();
			}
		},
		teardown: async () => {
			if (process.env.DEBUG_DAEMON) {
				const { execSync } = await import("node:child_process");
				console.log(
					execSync(
						`cat ${world.home}/daemon/supervisor.log; tail -n 20 ${world.home}/daemon/workers/*/worker.log`,
					).toString(),
				);
			}
			for (const run of running) run.child.kill("SIGKILL");
			killDaemon(world.home);
			await server.close();
			world.cleanup();
		},
	};
}

/** A client process a test started. */
export interface Spawned {
	child: { kill(signal: NodeJS.Signals): boolean };
}

/** After a test: SIGKILL the client processes it started (emptying the list) and tear its world down. */
export async function endDaemonTest(world: DaemonWorld | undefined, clients: Spawned[]): Promise<void> {
	for (const client of clients.splice(0)) client.child.kill("SIGKILL");
	await world?.teardown();
}

/** SIGKILL the supervisor and the workers of an agent home (only processes whose start identity matches). */
export function killDaemon(home: string): void {
	const paths = daemonPaths(home);
	try {
		const supervisor = JSON.parse(readFileSync(paths.supervisor, "utf8")) as { pid: number; startId: string };
		if (isSameProcess(supervisor.pid, supervisor.startId)) process.kill(supervisor.pid, "SIGKILL");
	} catch {}
	for (const key of workerKeys(paths)) {
		const record = readWorkerRecord(paths, key);
		if (record?.pid && isSameProcess(record.pid, record.startId)) process.kill(record.pid, "SIGKILL");
	}
}

/**
 * Poll `check` every 100 ms until it returns a value (not undefined/false), or fail after `ms`
 * (generous: a worker and its kernel can take tens of seconds to start on a loaded machine).
 */
export async function eventually<T>(
	what: string,
	check: () => Promise<T | undefined | false> | T | undefined | false,
	ms = 120_000,
): Promise<T> {
	const deadline = Date.now() + ms;
	let last: unknown;
	while (Date.now() < deadline) {
		try {
			const value = await check();
			if (value !== undefined && value !== false) return value as T;
		} catch (error) {
			last = error;
		}
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	throw new Error(`Timed out waiting for ${what}${last ? ` (${(last as Error).message})` : ""}`);
}

/** The records of a session file, parsed line by line (every line must parse). */
export function sessionRecords(path: string): Record<string, unknown>[] {
	const lines = readFileSync(path, "utf8").split("\n");
	return lines.filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** `user`/`assistant`/`toolResult` for messages, the entry type otherwise. */
export function roles(records: Record<string, unknown>[]): string[] {
	return records.map((record) =>
		record.type === "message" ? String((record.message as { role: string }).role) : String(record.type),
	);
}

/**
 * A cell that prints `before`, then runs until the test calls `releaseHeldCell` (at most 5
 * minutes), then prints `after`: it ends after the test's next step however loaded the machine is.
 */
export function heldCell(before: string, after: string): string {
	return [
		"import time, os",
		`print(${JSON.stringify(before)}, flush=True)`,
		"end = time.time() + 300",
		"while not os.path.exists('release-held-cell') and time.time() < end:",
		"    time.sleep(0.05)",
		`print(${JSON.stringify(after)})`,
	].join("\n");
}

/** Let the held cell end (it runs in the world's project, the kernel's working directory). */
export function releaseHeldCell(w: TempWorld): void {
	writeFileSync(join(w.project, "release-held-cell"), "");
}
