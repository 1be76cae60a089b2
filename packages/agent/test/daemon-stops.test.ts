import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { spawnCli, spawnCliText } from "prime-agent-test-support/cli-process";
import {
	type DaemonWorld,
	endDaemonTest,
	eventually,
	makeDaemonWorld,
	type Spawned,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import { afterEach, expect, it, vi } from "vitest";
import { daemonPaths, liveWorkers as liveWorkersOf, workerKeys } from "../src/daemon/index.js";
import { ONE_SHOT_CLIENT_GONE_MID_RUN } from "../src/daemon/worker.js";
import { ExitCode } from "../src/errors.js";
import { alive } from "./agent-scripts.js";

// Real processes: a supervisor, workers and kernels. Runs stopped by signals to their client, and
// daemons whose record writes are made to fail (as on a full disk: a record's path made a folder, so
// every write of it fails).
vi.setConfig({ testTimeout: 240_000 });

let world: DaemonWorld | undefined;
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(world, clients);
	world = undefined;
});

const LONG_CELL = "import time\nprint('working', flush=True)\ntime.sleep(120)";

/** Pids of the world's workers whose process still runs. */
const liveWorkers = (w: DaemonWorld): number[] => liveWorkersOf(daemonPaths(w.home)).map((worker) => worker.pid);

it("a one-shot worker that cannot write its record still stops when its run ends", async () => {
	// The cell makes the worker's own record a folder: every later write of it fails.
	const breakRecord = [
		"import glob, os",
		"found = glob.glob(os.path.join(os.environ['PRIME_AGENT_DIR'], 'daemon', 'workers', '*', 'session.json'))",
		"for path in found:",
		"    os.remove(path)",
		"    os.mkdir(path)",
		"print(len(found))",
	].join("\n");
	world = await makeDaemonWorld([{ code: breakRecord }, { text: "Done." }]);
	const run = await world.cli(["-p", "break the record", "--model", "local/coder"]);
	expect(run.code).toBe(0);
	expect(run.stdout).toBe("Done.\n");
	const w = world;
	await eventually("the worker to exit", () => liveWorkers(w).length === 0, 60_000);
	const [key] = workerKeys(daemonPaths(w.home));
	expect(readFileSync(join(daemonPaths(w.home).workers, String(key), "worker.log"), "utf8")).toContain(
		"Could not write this worker's record:",
	);
});

it("shutdown stops every agent when the daemon cannot record the stops", async () => {
	world = await makeDaemonWorld([]);
	const paths = daemonPaths(world.home);
	const started = await world.cli(["--model", "local/coder"], "/exit\n");
	expect(started.code).toBe(0);
	const [key] = workerKeys(paths) as [string];
	const supervisor = JSON.parse(readFileSync(paths.supervisor, "utf8")) as { pid: number };
	// The supervisor writes a record through a temp file named by its pid: a folder there fails the write.
	const temp = join(paths.workers, key, `worker.json.${supervisor.pid}.tmp`);
	mkdirSync(temp);
	const stopped = await world.cli(["shutdown"]);
	expect(stopped.stderr).toBe("");
	expect(stopped.stdout).toBe("Stopped every agent and the daemon.\n");
	expect(stopped.code).toBe(0);
	expect(liveWorkers(world)).toEqual([]);
	expect(readFileSync(paths.log, "utf8")).toContain(`Could not record the stop of agent ${key}:`);
	rmSync(temp, { recursive: true });
});

it("SIGTERM to a -p client stops the run in its worker, which saves the session and stops; the client says how to resume", async () => {
	world = await makeDaemonWorld([{ code: LONG_CELL }, { text: "never asked" }]);
	const text = spawnCliText(["-p", "run the long job", "--model", "local/coder"], world.project, world.env);
	clients.push(text);
	await text.waitFor("stderr", "Python kernel ready");
	text.child.kill("SIGTERM");
	expect(await text.exitCode()).toBe(ExitCode.interrupted);
	expect(text.stderr()).toContain("\nStopping (SIGTERM)…\n");
	expect(text.stderr()).toMatch(/Interrupted\. The session is saved: resume it with `prime-agent --resume \S+`\.\n$/);
	const w = world;
	await eventually("the worker to exit", () => liveWorkers(w).length === 0, 60_000);
	// The model was not asked again: the run ended at the signal.
	expect(w.server.requests).toHaveLength(1);
});

it("SIGHUP to a --mode json -p client gives the in-process lines: the interrupt, then the result with the resume hint", async () => {
	world = await makeDaemonWorld([{ code: LONG_CELL }, { text: "never asked" }]);
	const json = spawnCli(
		["--mode", "json", "-p", "run the long job", "--model", "local/coder"],
		world.project,
		world.env,
	);
	clients.push(json);
	await json.waitForEvent((event) => event.type === "tool_execution_update");
	json.child.kill("SIGHUP");
	expect(await json.exitCode()).toBe(ExitCode.interrupted);
	expect(json.events).toContainEqual({ type: "interrupt", action: "exit", signal: "SIGHUP" });
	const session = json.events[0] as { id: string; path: string };
	expect(json.events.at(-1)).toMatchObject({
		type: "result",
		status: "aborted",
		message: `Interrupted. The session is saved: resume it with \`prime-agent --resume ${session.id}\`.`,
	});
	expect(JSON.stringify(sessionRecords(session.path))).toContain("KeyboardInterrupt");
	expect(world.server.requests).toHaveLength(1);
});

it("SIGTERM while the worker starts stops before the run begins: nothing sent to the model, the worker let go", async () => {
	world = await makeDaemonWorld([{ text: "never asked" }]);
	// A supervisor running, then paused: the next client waits for it with its run not begun.
	expect((await world.cli(["agents"])).code).toBe(0);
	const supervisor = JSON.parse(readFileSync(daemonPaths(world.home).supervisor, "utf8")) as { pid: number };
	process.kill(supervisor.pid, "SIGSTOP");
	try {
		const text = spawnCliText(["-p", "run it", "--model", "local/coder"], world.project, world.env);
		clients.push(text);
		// The client has reached the supervisor once it holds a socket besides its standard streams
		// (which are sockets too, as a spawned child's pipes).
		const pid = text.child.pid as number;
		await eventually("the client's connection to the supervisor", () =>
			readdirSync(`/proc/${pid}/fd`).some((fd) => {
				if (Number(fd) <= 2) return false;
				try {
					return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:");
				} catch {
					return false;
				}
			}),
		);
		text.child.kill("SIGTERM");
		process.kill(supervisor.pid, "SIGCONT");
		expect(await text.exitCode()).toBe(ExitCode.interrupted);
		expect(text.stderr()).toBe("Stopped (SIGTERM) before the run began: nothing was sent to the model.\n");
	} finally {
		process.kill(supervisor.pid, "SIGCONT");
	}
	const w = world;
	await eventually("the worker to exit", () => liveWorkers(w).length === 0, 60_000);
	expect(w.server.requests).toHaveLength(0);
});

it("SIGKILL of a -p client mid-run stops its run at once: worker, kernels, the sub-agent and their processes go, and `agents` says why", async () => {
	// Files in the agent home, which both kernels know. The root's cell starts a shell process and a
	// sub-agent, waits for the sub-agent's cell to run, then sleeps.
	const at = (name: string) => `os.path.join(os.environ['PRIME_AGENT_DIR'], ${JSON.stringify(name)})`;
	const [pids, childPid] = [at("pids"), at("child.pid")];
	const script = [
		{
			code: [
				"import os, subprocess, time, asyncio",
				"shell = subprocess.Popen(['sleep', '300'])",
				`await rlm("sleep", name="sleeper")`,
				`while not os.path.exists(${childPid}): await asyncio.sleep(0.05)`,
				`child = open(${childPid}).read()`,
				`open(${pids} + ".tmp", "w").write(f"{os.getpid()} {shell.pid} {child}")`,
				`os.rename(${pids} + ".tmp", ${pids})`,
				"print('all running', flush=True)",
				"time.sleep(300)",
			].join("\n"),
		},
		{
			code: `import os, time\nopen(${childPid} + ".tmp", "w").write(str(os.getpid()))\nos.rename(${childPid} + ".tmp", ${childPid})\ntime.sleep(300)`,
		},
	];
	// A grace period far longer than the bound below: only stopping at once passes.
	world = await makeDaemonWorld(script, { PRIME_AGENT_ONESHOT_GRACE_MS: "300000" });
	const json = spawnCli(
		["--mode", "json", "-p", "start everything", "--model", "local/coder"],
		world.project,
		world.env,
	);
	clients.push(json);
	await json.waitForEvent(
		(event) => event.type === "tool_execution_update" && JSON.stringify(event).includes("all running"),
	);
	const key = String(json.events[0]?.agent);
	const [worker] = liveWorkers(world) as [number];
	const [rootKernel, shell, childKernel] = readFileSync(join(world.home, "pids"), "utf8").split(" ").map(Number) as [
		number,
		number,
		number,
	];
	const processes = { worker, rootKernel, shell, childKernel };
	expect(Object.values(processes).filter(alive)).toHaveLength(4);

	json.child.kill("SIGKILL");
	await json.exitCode();
	const gone = Date.now();
	const w = world;
	await eventually(
		"every process of the run to exit",
		() => Object.values(processes).every((pid) => !alive(pid)),
		60_000,
	);
	expect(Date.now() - gone).toBeLessThan(60_000);
	const [info] = await w.agents();
	expect(info).toMatchObject({
		key,
		state: "saved",
		owner: "oneshot",
		clients: 0,
		stopReason: ONE_SHOT_CLIENT_GONE_MID_RUN,
	});
	const listed = await w.cli(["agents"]);
	expect(listed.stdout.split("\n")[0]).toMatch(
		new RegExp(
			`^${key}  saved     .*  \\[one-shot\\]  stopped: its one-shot client went away during the run \\(killed or crashed\\), so the run was stopped$`,
		),
	);
	// The session holds the run up to the cell, every line whole: `--resume` goes on from there.
	const session = json.events[0] as { path: string };
	expect(sessionRecords(session.path).map((record) => record.type)).toContain("message");
});
