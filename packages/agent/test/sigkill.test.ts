import { readFileSync } from "node:fs";
import { type CliProcess, spawnCli } from "prime-agent-test-support/cli-process";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";
import { alive } from "./agent-scripts.js";

let world: TempWorld;
let server: LoopbackServer;
let cli: CliProcess | undefined;
afterEach(async () => {
	cli?.child.kill("SIGKILL");
	await server?.close();
	world?.cleanup();
});

it("a run killed with SIGKILL mid-turn leaves a transcript where every line parses, and no kernel behind", async () => {
	server = await openAiCompletionsServer([{ code: "import time\nprint('working', flush=True)\ntime.sleep(120)" }]);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
	cli = spawnCli(["--mode", "json", "-p", "run the long job", "--model", "local/coder"], world.project, world.env);
	// The cell has printed: the kernel is mid-cell, the turn is mid-flight.
	await cli.waitForEvent((event) => event.type === "tool_execution_update");
	cli.child.kill("SIGKILL");
	await cli.exitCode();

	const session = cli.events[0] as { type: string; path: string };
	expect(session.type).toBe("session");
	const lines = readFileSync(session.path, "utf8").split("\n");
	expect(lines.at(-1)).toBe("");
	const records = lines.slice(0, -1).map((line) => JSON.parse(line));
	expect(records.map((record) => (record.type === "message" ? record.message.role : record.type))).toEqual([
		"session",
		"model_change",
		"user",
		"assistant",
	]);
	expect(records[3].message.content[0]).toMatchObject({ type: "toolCall", name: "ipython" });

	// The kernel watches its host and exits with it.
	const ready = cli.events.find((event) => event.type === "kernel_status" && event.phase === "ready") as {
		pid: number;
	};
	const deadline = Date.now() + 10_000;
	while (alive(ready.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
	expect(alive(ready.pid)).toBe(false);
});

it("a parent killed with SIGKILL while a sub-agent runs a cell leaves neither its kernel nor the child's alive", async () => {
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	const pidFile = `${world.project}/child.pid`;
	server = await openAiCompletionsServer([
		// The root spawns, then waits in its cell until the child's cell runs: the child's call is the second request.
		{
			code: `await rlm("sleep", name="sleeper")\nimport os, time, asyncio\nwhile not os.path.exists(${JSON.stringify(pidFile)}): await asyncio.sleep(0.05)\ntime.sleep(120)`,
		},
		{
			code: `import os, time\nopen(${JSON.stringify(`${pidFile}.tmp`)}, "w").write(str(os.getpid()))\nos.rename(${JSON.stringify(`${pidFile}.tmp`)}, ${JSON.stringify(pidFile)})\ntime.sleep(120)`,
		},
	]);
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
	cli = spawnCli(["--mode", "json", "-p", "spawn a sleeper", "--model", "local/coder"], world.project, world.env);
	await cli.waitForEvent((event) => event.type === "child_spawned");
	const deadline = Date.now() + 30_000;
	let childPid = 0;
	while (!childPid && Date.now() < deadline) {
		try {
			childPid = Number(readFileSync(pidFile, "utf8"));
		} catch {
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
	}
	expect(alive(childPid)).toBe(true);
	const root = cli.events.find((event) => event.type === "kernel_status" && event.phase === "ready") as { pid: number };
	cli.child.kill("SIGKILL");
	await cli.exitCode();
	const gone = Date.now() + 10_000;
	while ((alive(childPid) || alive(root.pid)) && Date.now() < gone)
		await new Promise((resolve) => setTimeout(resolve, 100));
	expect(alive(childPid)).toBe(false);
	expect(alive(root.pid)).toBe(false);
});
