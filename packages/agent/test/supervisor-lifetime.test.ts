import { existsSync, readFileSync } from "node:fs";
import { spawnCli } from "prime-agent-test-support/cli-process";
import {
	type DaemonWorld,
	endDaemonTest,
	eventually,
	makeDaemonWorld,
	type Spawned,
} from "prime-agent-test-support/daemon-world";
import { afterEach, expect, it, vi } from "vitest";
import {
	connectSupervisor,
	daemonContext,
	daemonPaths,
	isSameProcess,
	processStartId,
	readWorkerRecord,
	type SupervisorClient,
} from "../src/daemon/index.js";
import { daemonDoctorCheck } from "../src/doctor/daemon.js";
import { alive } from "./agent-scripts.js";

// Real processes: supervisors killed with SIGKILL or left idle, workers and their kernels.
vi.setConfig({ testTimeout: 120_000 });

let world: DaemonWorld | undefined;
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(world, clients);
	world = undefined;
});

/** A cell that prints its kernel's pid, then runs on. */
const KERNEL_PID_CELL = "import os, time\nprint('kernel pid', os.getpid(), flush=True)\ntime.sleep(600)";

type Running = { pid: number; startId: string };

function supervisorOf(w: DaemonWorld): Running {
	return JSON.parse(readFileSync(daemonPaths(w.home).supervisor, "utf8")) as Running;
}

/** SIGKILL the world's supervisor and wait until it is gone; its workers run on, with no supervisor. */
async function killSupervisor(w: DaemonWorld): Promise<Running> {
	const supervisor = supervisorOf(w);
	process.kill(supervisor.pid, "SIGKILL");
	await eventually("the supervisor to die", () => !isSameProcess(supervisor.pid, supervisor.startId));
	return supervisor;
}

it("with its supervisor killed, `status` and `doctor` still see a live worker and `shutdown --force` stops it and its kernel", async () => {
	world = await makeDaemonWorld([{ code: KERNEL_PID_CELL }]);
	const w = world;
	// A client attached to the worker (a `--mode json -p` run), its cell running in the kernel.
	const run = spawnCli(["--mode", "json", "-p", "run the long job", "--model", "local/coder"], w.project, w.env);
	clients.push(run);
	const update = await run.waitForEvent(
		(event) => event.type === "tool_execution_update" && /kernel pid \d+/.test(JSON.stringify(event)),
	);
	const kernelPid = Number(/kernel pid (\d+)/.exec(JSON.stringify(update))?.[1]);
	const kernel = { pid: kernelPid, startId: processStartId(kernelPid) as string };
	const key = String(run.events[0]?.agent);
	const record = readWorkerRecord(daemonPaths(w.home), key);
	const worker = { pid: record?.pid as number, startId: record?.startId as string };
	expect(isSameProcess(worker.pid, worker.startId)).toBe(true);

	const first = await killSupervisor(w);
	const status = await w.cli(["status"]);
	expect(status.stderr).toBe("");
	expect(status.code).toBe(0);
	const lines = status.stdout.split("\n");
	expect(lines[0]).toMatch(/^Daemon running: /);
	const adopter = supervisorOf(w);
	expect(adopter.pid).not.toBe(first.pid);
	expect(lines.slice(0, 2)).toEqual([
		`Daemon running: supervisor pid ${adopter.pid}, socket ${daemonPaths(w.home).socket}`,
		"Agents: 1 running, 0 idle, 0 saved, 0 failed",
	]);
	expect(lines[2]).toMatch(new RegExp(`^  ${key}  running   .*\\[1 attached, one-shot\\]$`));
	expect(lines.slice(3)).toEqual([""]);

	await killSupervisor(w);
	expect(await daemonDoctorCheck(w.home, w.env)).toEqual({
		name: "daemon",
		status: "ok",
		detail: "supervisor running, 1 live agent",
	});

	await killSupervisor(w);
	const stopped = await w.cli(["shutdown", "--force"]);
	expect(stopped.stderr).toBe("");
	expect(stopped.stdout).toBe("Stopped every agent (killed) and the daemon.\n");
	expect(stopped.code).toBe(0);
	expect(isSameProcess(worker.pid, worker.startId)).toBe(false);
	// The kernel's guard kills it once its worker is gone.
	await eventually("the kernel to be gone", () => !isSameProcess(kernel.pid, kernel.startId), 20_000);
	expect(existsSync(daemonPaths(w.home).supervisor)).toBe(false);
	await run.exitCode();

	// Nothing left: `status` says so, and starts no supervisor for nothing.
	const after = await w.cli(["status"]);
	expect(after.stdout).toBe("The agent daemon is not running (it starts with the next `prime-agent` session).\n");
	expect(existsSync(daemonPaths(w.home).supervisor)).toBe(false);
	const none = await w.cli(["shutdown", "--force"]);
	expect(none.stdout).toBe("The agent daemon is not running.\n");
	expect(existsSync(daemonPaths(w.home).supervisor)).toBe(false);
});

it("a supervisor with nothing to supervise exits after its idle period, and the next -p starts one again", async () => {
	world = await makeDaemonWorld([{ text: "First." }, { text: "Second." }], {
		PRIME_AGENT_SUPERVISOR_IDLE_MS: "1500",
	});
	const w = world;
	const paths = daemonPaths(w.home);
	// Each supervisor says so in the log as it starts (it may be gone again before a test reads its lock).
	const supervisors = () =>
		[...readFileSync(paths.log, "utf8").matchAll(/^Supervisor (\d+) listening on /gm)].map((match) => Number(match[1]));
	const first = await w.cli(["-p", "one", "--model", "local/coder"]);
	expect(first.stdout).toBe("First.\n");
	const [pid] = supervisors() as [number];
	expect(supervisors()).toHaveLength(1);
	await eventually(
		"the idle supervisor to exit",
		() => !alive(pid) && !existsSync(paths.supervisor) && !existsSync(paths.socket),
	);

	const second = await w.cli(["-p", "two", "--model", "local/coder"]);
	expect(second.stderr).toBe("");
	expect(second.stdout).toBe("Second.\n");
	expect(second.code).toBe(0);
	expect(supervisors()).toHaveLength(2);
	expect(supervisors()[1]).not.toBe(pid);
});

it("an idle supervisor does not exit under a client that has connected: its request is answered however long it waits", async () => {
	const idleMs = 1000;
	world = await makeDaemonWorld([], { PRIME_AGENT_SUPERVISOR_IDLE_MS: String(idleMs) });
	const client = (await connectSupervisor(daemonContext(world.env))) as SupervisorClient;
	const supervisor = supervisorOf(world);
	try {
		// Idle time passing is the condition itself here (no event marks it): several periods with the connection open.
		await new Promise((resolve) => setTimeout(resolve, 4 * idleMs));
		const reply = await client.request({ type: "list" });
		expect(reply).toMatchObject({ ok: true, data: [] });
		expect(isSameProcess(supervisor.pid, supervisor.startId)).toBe(true);
	} finally {
		client.close();
	}
	// Once the client has gone, it exits.
	await eventually("the idle supervisor to exit", () => !isSameProcess(supervisor.pid, supervisor.startId));
});
