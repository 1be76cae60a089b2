import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CliProcess, spawnCli } from "prime-agent-test-support/cli-process";
import { type LoopbackServer, localModelWorld, type ScriptedReply } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";

/**
 * Every process the agent starts (its kernel, MCP stdio servers, gates), and whatever those
 * started in their process groups, is gone within 2 s of the agent's death, however and whenever
 * it dies: these tests kill the real command line with SIGKILL at the moments that used to leak.
 */

const STUBBORN_SERVER = fileURLToPath(new URL("./fixtures/mcp-stubborn-server.mjs", import.meta.url));

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
let cli: CliProcess | undefined;
/** Every pid a test recorded, killed after it whatever it asserted: a failing test leaks nothing. */
const recorded: number[] = [];
afterEach(async () => {
	cli?.child.kill("SIGKILL");
	cli = undefined;
	for (const pid of recorded.splice(0)) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// Gone, as it should be.
		}
	}
	await server?.close();
	world?.cleanup();
	world = undefined;
});

/** The real command line on a loopback model playing `script`; `prepare` writes config first. */
async function start(
	script: ScriptedReply[],
	options: { args?: string[]; prepare?: (world: TempWorld) => void } = {},
): Promise<{ world: TempWorld; cli: CliProcess }> {
	const local = await localModelWorld(script);
	world = local.world;
	server = local.server;
	options.prepare?.(world);
	const args = ["--mode", "json", "-p", "go", "--model", "local/coder", ...(options.args ?? [])];
	cli = spawnCli(args, world.project, world.env);
	return { world, cli };
}

/** Whether `pid` runs code: alive and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch {
		return false;
	}
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]);
	} catch {
		return false;
	}
}

/** Polls (up to `timeoutMs`) until `test` holds. */
async function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!test()) {
		if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/** The number a file holds, once it exists (written by a process of the test). */
async function pidIn(path: string): Promise<number> {
	await until(() => existsSync(path) && readFileSync(path, "utf8").endsWith("\n"), 60_000, `a pid in ${path}`);
	const pid = Number(readFileSync(path, "utf8").trim());
	recorded.push(pid);
	return pid;
}

/**
 * SIGKILL to the agent, then the milliseconds until none of `pids` runs. Polls for up to 10 s, so
 * a failure shows how long it took rather than only that it was late.
 */
async function killAgentAndTime(agent: CliProcess, pids: number[]): Promise<number> {
	expect(pids.filter(running)).toEqual(pids);
	const killed = Date.now();
	agent.child.kill("SIGKILL");
	await agent.exitCode();
	await until(() => !pids.some(running), 10_000, `the end of ${pids.join(", ")}`);
	return Date.now() - killed;
}

function kernelPid(agent: CliProcess): number {
	const ready = agent.events.find((event) => event.type === "kernel_status" && event.phase === "ready");
	const pid = (ready as { pid: number }).pid;
	recorded.push(pid);
	return pid;
}

describe("nothing the agent started outlives its SIGKILL", () => {
	it("killed right after its answer, while its kernel shuts down: the kernel and its subprocess", async () => {
		// ipykernel's shutdown terminates the kernel's group and waits up to 30 s for it to go; this
		// subprocess records the SIGTERM and stays, so the agent is killed inside that wait (where the
		// kernel used to run on for 30 s).
		const marker = "terminated.log";
		const { world, cli } = await start([
			{
				code: `import subprocess\nstays = subprocess.Popen(['sh', '-c', "echo $$ > stays.pid; trap 'echo term >> ${marker}' TERM; while :; do sleep 0.1; done"])`,
			},
			{ text: "Done." },
		]);
		const stays = await pidIn(join(world.project, "stays.pid"));
		await until(() => existsSync(join(world.project, marker)), 60_000, "the kernel's shutdown");
		const took = await killAgentAndTime(cli, [kernelPid(cli), stays]);
		expect(took).toBeLessThan(2_000);
	});

	it("an MCP stdio server that ignores its closed stdin, and the server's own subprocess", async () => {
		let pids = "";
		const { cli } = await start(
			[{ code: "import mcp_servers.stubborn as s\nprint(await s.pid(), flush=True)\nimport time\ntime.sleep(120)" }],
			{
				prepare: (world) => {
					pids = join(world.home, "stubborn.json");
					world.writeHome("mcp.json", {
						mcpServers: {
							stubborn: { command: process.execPath, args: [STUBBORN_SERVER], env: { MCP_FIXTURE_PIDS: pids } },
						},
					});
				},
			},
		);
		await cli.waitForEvent((event) => event.type === "tool_execution_update");
		const started = JSON.parse(readFileSync(pids, "utf8")) as { server: number; subprocess: number };
		recorded.push(started.server, started.subprocess);
		const took = await killAgentAndTime(cli, [started.server, started.subprocess, kernelPid(cli)]);
		expect(took).toBeLessThan(2_000);
	});

	it("a running gate, and what it started in the background", async () => {
		const { world, cli } = await start([{ text: "Done." }], {
			args: [
				"--autonomous",
				"--gate",
				// The agent registers a gate's group in the statement after starting it; the second of
				// sleep keeps a busy machine's scheduler from putting the kill between the two.
				"sleep 300 > /dev/null 2>&1 & sleep 1; echo $! > background.pid; echo $$ > gate.pid; exec sleep 300",
			],
		});
		const gate = await pidIn(join(world.project, "gate.pid"));
		const background = await pidIn(join(world.project, "background.pid"));
		const took = await killAgentAndTime(cli, [gate, background]);
		expect(took).toBeLessThan(2_000);
	});
});
