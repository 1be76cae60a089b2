import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnCli, spawnCliText } from "prime-agent-test-support/cli-process";
import {
	type DaemonWorld,
	endDaemonTest,
	eventually,
	heldCell,
	makeDaemonWorld,
	releaseHeldCell,
	roles,
	type Spawned,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
	type AgentInfo,
	connectSupervisor,
	DAEMON_PROTOCOL_VERSION,
	daemonContext,
	daemonPaths,
	isSameProcess,
	KEPT_FINISHED_ONE_SHOTS,
	ProtocolClient,
	processStartId,
	RESTART_DELAYS_MS,
	readSessionRecord,
	readWorkerRecord,
	type SupervisorClient,
	writeSessionRecord,
	writeWorkerRecord,
} from "../src/daemon/index.js";
import { daemonDoctorCheck } from "../src/doctor/daemon.js";

// Real processes: a supervisor, workers, kernels, and a command line started for each step.
vi.setConfig({ testTimeout: 240_000 });

let world: DaemonWorld | undefined;
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(world, clients);
	world = undefined;
});

/** A session file holding one prompt answered after one cell. */
const ONE_CELL_TURN = ["session", "model_change", "user", "assistant", "toolResult", "assistant"];
const LONG_CELL = "import time\nprint('working', flush=True)\ntime.sleep(120)";
/** `--mode json -p` running LONG_CELL in a one-shot worker; resolves once the cell prints. */
async function longOneShotRun(w: DaemonWorld) {
	const cli = spawnCli(["--mode", "json", "-p", "run the long job", "--model", "local/coder"], w.project, w.env);
	clients.push(cli);
	await cli.waitForEvent((event) => event.type === "tool_execution_update");
	return cli;
}

/** Start a resident agent with the line chat and detach at once; returns its key. */
async function residentAgent(w: DaemonWorld): Promise<string> {
	const result = await w.cli(["--model", "local/coder"], "/exit\n");
	expect(result.code).toBe(0);
	return detachedKey(result.stderr);
}

/** The line chat: prompt, wait until its cell starts, detach; returns the agent's key. */
async function detachMidRun(w: DaemonWorld, prompt: string): Promise<string> {
	const chat = spawnCliText(["--model", "local/coder"], w.project, w.env);
	clients.push(chat);
	chat.line(prompt);
	await chat.waitFor("stderr", "ipython: import time");
	chat.line("/exit");
	expect(await chat.exitCode()).toBe(0);
	return detachedKey(chat.stderr());
}

function detachedKey(stderr: string): string {
	const match = /Detached from agent ([0-9a-f]{8}); it keeps running\./.exec(stderr);
	if (!match) throw new Error(`no detach line in: ${stderr}`);
	return match[1] as string;
}

async function agent(w: DaemonWorld, key: string): Promise<AgentInfo> {
	const found = (await w.agents()).find((info) => info.key === key);
	if (!found) throw new Error(`no agent ${key}`);
	return found;
}

function supervisor(w: DaemonWorld): { pid: number; startId: string } {
	return JSON.parse(readFileSync(daemonPaths(w.home).supervisor, "utf8")) as { pid: number; startId: string };
}

/**
 * Proof that every supervisor timer due by `instant` has run (its callback started): the worker of
 * agent `spare` is killed after that instant, and the restart the supervisor then schedules (250 ms
 * on) is due later; timers run in the order they fall due, so once it has begun the earlier ones
 * have run, however loaded the machine.
 */
async function supervisorTimersPast(w: DaemonWorld, spare: string, instant: number): Promise<void> {
	// A margin for the wall clock against the supervisor's monotonic one.
	await new Promise((resolve) => setTimeout(resolve, Math.max(0, instant + 1000 - Date.now())));
	const pid = (await agent(w, spare)).pid as number;
	process.kill(pid, "SIGKILL");
	await eventually("the spare agent's restart", async () => {
		const now = await agent(w, spare);
		return now.pid && now.pid !== pid ? now : undefined;
	});
}

describe("daemon security", () => {
	it("keeps its folder and token to the user, and refuses a wrong token at the supervisor and at a worker", async () => {
		world = await makeDaemonWorld([]);
		const status = await world.cli(["status"]);
		expect(status.stdout).toBe("The agent daemon is not running (it starts with the next `prime-agent` session).\n");
		const key = await residentAgent(world);
		const paths = daemonPaths(world.home);
		expect(statSync(paths.dir).mode & 0o777).toBe(0o700);
		expect(statSync(paths.workers).mode & 0o777).toBe(0o700);
		expect(statSync(paths.token).mode & 0o777).toBe(0o600);

		for (const socket of [paths.socket, join(paths.workers, key, "worker.sock")]) {
			const wrong = await ProtocolClient.connect(socket);
			const reply = await wrong.request({ type: "hello", token: "0".repeat(64), version: DAEMON_PROTOCOL_VERSION });
			expect(reply.ok).toBe(false);
			expect((reply as { message: string }).message).toMatch(
				/^Wrong or missing token: this (daemon|worker) belongs to another user/,
			);
			await wrong.closed;
			// A command without a hello first is refused the same way.
			const bare = await ProtocolClient.connect(socket);
			const refused = await bare.request({ type: socket === paths.socket ? "list" : "shutdown" });
			expect(refused.ok).toBe(false);
			await bare.closed;
		}
		// The agent was not touched by either.
		expect((await agent(world, key)).state).toBe("idle");
		const doctor = await daemonDoctorCheck(world.home, world.env);
		expect(doctor).toEqual({ name: "daemon", status: "ok", detail: "supervisor running, 1 live agent" });
	});

	// Where the machine allows (the tests run as root): another uid, with every folder above the
	// daemon's open to it, can neither reach a socket nor read the token.
	it.runIf(process.getuid?.() === 0)("another user cannot connect to a socket or read the token", async () => {
		world = await makeDaemonWorld([]);
		const key = await residentAgent(world);
		const paths = daemonPaths(world.home);
		chmodSync(dirname(world.home), 0o755);
		chmodSync(world.home, 0o755);
		const probe = `
			const net = require("node:net"), fs = require("node:fs");
			const tryConnect = (path) => new Promise((resolve) => {
				const socket = net.createConnection(path);
				socket.once("connect", () => { socket.destroy(); resolve("connected"); });
				socket.once("error", (error) => resolve(error.code));
			});
			(async () => {
				const out = [];
				for (const path of process.argv.slice(1, 3)) out.push(await tryConnect(path));
				try { fs.readFileSync(process.argv[3]); out.push("read"); } catch (error) { out.push(error.code); }
				console.log(out.join(" "));
			})();`;
		const other = spawnSync(
			"setpriv",
			[
				"--reuid=65534",
				"--regid=65534",
				"--clear-groups",
				process.execPath,
				"-e",
				probe,
				paths.socket,
				join(paths.workers, key, "worker.sock"),
				paths.token,
			],
			{ encoding: "utf8" },
		);
		expect(other.stderr).toBe("");
		expect(other.stdout).toBe("EACCES EACCES EACCES\n");
		// The agent was not touched.
		expect((await agent(world, key)).state).toBe("idle");
	});
});

describe("daemon runs", () => {
	it("-p in json mode runs in a worker with the in-process lines, and the worker stops when the run ends", async () => {
		world = await makeDaemonWorld([{ code: "print(6 * 7)" }, { text: "It is 42." }], {
			PRIME_TEST_SECRET_KEY: "sk-test-secret",
		});
		const cli = spawnCli(
			["--mode", "json", "-p", "what is 6 * 7?", "--model", "local/coder"],
			world.project,
			world.env,
		);
		clients.push(cli);
		expect(await cli.exitCode()).toBe(0);
		const [session] = cli.events as [Record<string, unknown>];
		expect(session.type).toBe("session");
		expect(session.model).toBe("local/coder");
		const result = cli.events.at(-1) as Record<string, unknown>;
		expect(result).toMatchObject({ type: "result", status: "ok", exitCode: 0, sessionPersisted: true });
		expect(cli.events.some((event) => event.type === "tool_execution_end")).toBe(true);
		expect(roles(sessionRecords(String(session.path)))).toEqual(ONE_CELL_TURN);
		const [info] = (await world.agents()) as [AgentInfo];
		expect(info).toMatchObject({ key: session.agent, state: "saved", owner: "oneshot", clients: 0, crashes: 0 });
		expect(readSessionRecord(daemonPaths(world.home), info.key)?.stopReason).toBe("its one-shot run ended");
		// A finished worker's record keeps no copy of the caller's environment (keys among it).
		const paths = daemonPaths(world.home);
		await eventually("the finished worker's record without its environment", () =>
			Object.keys(readWorkerRecord(paths, info.key)?.env ?? { x: 1 }).length === 0 ? true : undefined,
		);
		expect(readFileSync(join(paths.workers, info.key, "worker.json"), "utf8")).not.toContain("sk-test-secret");
	});

	it("a bad model is reported by the client with the session's own error, and leaves no agent behind", async () => {
		world = await makeDaemonWorld([]);
		const result = await world.cli(["-p", "hello", "--model", "nowhere/none"]);
		expect(result.code).toBe(2);
		expect(result.stderr).toContain('Error: Unknown provider "nowhere"');
		expect(await world.agents()).toEqual([]);
	});

	it("detach mid-run leaves the turn running; attach replays what happened meanwhile, and nothing is lost", async () => {
		world = await makeDaemonWorld([{ code: heldCell("step one", "step two") }, { text: "All done." }]);
		const key = await detachMidRun(world, "run the slow job");
		expect((await agent(world, key)).state).toBe("running");
		releaseHeldCell(world);
		const done = await eventually("the turn to end", async () => {
			const info = await agent(world as DaemonWorld, key);
			return info.state === "idle" ? info : undefined;
		});
		expect(roles(sessionRecords(done.sessionPath as string))).toEqual(ONE_CELL_TURN);
		const attached = await world.cli(["attach", key], "/exit\n");
		expect(attached.code).toBe(0);
		expect(attached.stderr).toContain("While detached (2 entries):\n");
		expect(attached.stderr).toMatch(/ {2}\S+ {2}result {5}step one step two\n/);
		expect(attached.stderr).toMatch(/ {2}\S+ {2}assistant {2}All done\.\n/);
		// A second attach right away: nothing new.
		const again = await world.cli(["attach", key], "/exit\n");
		expect(again.stderr).toContain("Nothing happened while detached.\n");
	});

	it("the line chat of a session resumed in a worker says where the conversation stands, as in process", async () => {
		world = await makeDaemonWorld([{ text: "It is 42." }]);
		const first = await world.cli(["--mode", "json", "-p", "what is 6 * 7?", "--model", "local/coder"]);
		expect(first.code).toBe(0);
		const id = (JSON.parse(first.stdout.split("\n")[0] as string) as { id: string }).id;
		const chat = await world.cli(["--resume", id, "--model", "local/coder"], "/exit\n");
		expect(chat.code).toBe(0);
		const key = detachedKey(chat.stderr);
		expect(chat.stderr).toContain(
			`· agent ${key}\nResumed session ${id} (2 messages).\n  you: what is 6 * 7?\n  agent: It is 42.\nType a message`,
		);
		// The one-shot run's agent, attached to: its session is served by the chat's agent now, and it says so.
		const oneShotKey = (JSON.parse(first.stdout.split("\n")[0] as string) as { agent: string }).agent;
		expect(oneShotKey).not.toBe(key);
		const attached = await world.cli(["attach", oneShotKey], "/exit\n");
		expect(attached.code).toBe(0);
		expect(attached.stderr.split("\n")[0]).toBe(
			`The session is open in agent ${key} already; this runs there (a session has one worker).`,
		);
		expect(attached.stderr).toContain(`· agent ${key}\n`);
	});

	it("a session open in a live worker is never opened twice: --resume and --continue run in that worker, which stays", async () => {
		world = await makeDaemonWorld([{ text: "first answer" }, { text: "second answer" }, { text: "third answer" }]);
		const chat = await world.cli(["--model", "local/coder"], "first question\n/exit\n");
		expect(chat.code).toBe(0);
		const key = detachedKey(chat.stderr);
		const { sessionId, sessionPath } = await agent(world, key);
		const resumed = await world.cli(["--resume", sessionId as string, "-p", "second question"]);
		expect(resumed.code).toBe(0);
		expect(resumed.stdout).toBe("second answer\n");
		expect(resumed.stderr).toContain(
			`The session is open in agent ${key} already; this runs there (a session has one worker).\n`,
		);
		const continued = await world.cli(["--continue", "-p", "third question"]);
		expect(continued.stdout).toBe("third answer\n");
		// One agent, still resident and idle; one writer: every prompt in one file, in order.
		const agents = await world.agents();
		expect(agents.map((info) => [info.key, info.state])).toEqual([[key, "idle"]]);
		const users = sessionRecords(sessionPath as string)
			.filter((record) => record.type === "message" && (record.message as { role: string }).role === "user")
			.map((record) => JSON.stringify((record.message as { content: unknown }).content));
		expect(users.map((text) => /(first|second|third) question/.exec(text)?.[0])).toEqual([
			"first question",
			"second question",
			"third question",
		]);
		// Resuming it at another entry while it runs would be a second writer: refused, with the way out.
		const at = await world.cli(["--resume", sessionId as string, "--at", "00000000", "-p", "x"]);
		expect(at.code).toBe(2);
		expect(at.stderr).toBe(
			`Error: Session ${sessionId} is open in agent ${key}; it cannot be resumed at another entry while it runs.\nAttach to it with \`prime-agent attach ${key}\`, or continue from that entry in a new file with --fork ${sessionId} --at <entry>.\n`,
		);
	});

	it("a session whose worker waits to be restarted after a crash is not opened by another: --resume goes to that agent", {
		timeout: 240_000,
	}, async () => {
		world = await makeDaemonWorld([{ text: "first answer" }, { text: "second answer" }]);
		const chat = await world.cli(["--model", "local/coder"], "first question\n/exit\n");
		const key = detachedKey(chat.stderr);
		// The answer written (the view left before it came).
		const { sessionId, sessionPath } = await eventually("the first answer", async () => {
			const info = await agent(world as DaemonWorld, key);
			return info.state === "idle" && info.sessionPath && existsSync(info.sessionPath) ? info : undefined;
		});
		const spare = await residentAgent(world);
		const paths = daemonPaths(world.home);
		// Three crashes: the third restart waits 5 s.
		for (let crash = 1; crash <= 3; crash++) {
			const pid = readWorkerRecord(paths, key)?.pid as number;
			process.kill(pid, "SIGKILL");
			if (crash < 3)
				await eventually("the restart", async () => {
					const info = await agent(world as DaemonWorld, key);
					return info.state === "idle" && info.pid !== pid ? info : undefined;
				});
		}
		await eventually(
			"the restart to be pending",
			async () => (await agent(world as DaemonWorld, key)).state === "starting",
		);
		const resumed = await world.cli(["--resume", sessionId as string, "-p", "second question"]);
		expect(resumed.stdout).toBe("second answer\n");
		expect(resumed.stderr).toContain(`The session is open in agent ${key} already; this runs there`);
		const served = await agent(world, key);
		// The pending restart's timer has come and gone: it started no second worker for the session.
		const due = Date.parse(readWorkerRecord(paths, key)?.lastCrashAt as string) + RESTART_DELAYS_MS[2];
		await supervisorTimersPast(world, spare, due);
		expect(await agent(world, key)).toMatchObject({ state: "idle", pid: served.pid });
		expect((await world.agents()).map((info) => info.key).sort()).toEqual([key, spare].sort());
		const users = sessionRecords(sessionPath as string).filter(
			(record) => record.type === "message" && (record.message as { role: string }).role === "user",
		);
		expect(users).toHaveLength(2);
	});

	it("a session named through a symlink is the same session; a stopped agent is not started again by a restart", async () => {
		world = await makeDaemonWorld([{ text: "first answer" }, { text: "second answer" }]);
		const chat = await world.cli(["--model", "local/coder"], "first question\n/exit\n");
		const key = detachedKey(chat.stderr);
		const { sessionPath } = await eventually("the first answer", async () => {
			const info = await agent(world as DaemonWorld, key);
			return info.state === "idle" && info.sessionPath && existsSync(info.sessionPath) ? info : undefined;
		});
		const link = join(world.project, "home-link");
		symlinkSync(world.home, link);
		const named = join(link, "sessions", basename(sessionPath as string));
		const resumed = await world.cli(["--resume", named, "-p", "second question"]);
		expect(resumed.stdout).toBe("second answer\n");
		expect(resumed.stderr).toContain(`The session is open in agent ${key} already; this runs there`);
		expect((await world.agents()).map((info) => info.key)).toEqual([key]);
		// Stopped on purpose: `/model`'s restart request does not bring it back; attach does.
		expect((await world.cli(["shutdown", key])).code).toBe(0);
		const supervisor = (await connectSupervisor(daemonContext(world.env))) as SupervisorClient;
		const reply = await supervisor.request({ type: "restart", key, changes: { model: "local/coder" } });
		supervisor.close();
		expect(reply).toMatchObject({
			ok: false,
			message: `Agent ${key} was stopped (prime-agent shutdown), so it is not started again on another model.`,
		});
		expect((await agent(world, key)).state).toBe("saved");
	});

	it("two -p runs of one session at once share its worker: the first run's end does not stop the second's", async () => {
		world = await makeDaemonWorld([
			{ text: "first" },
			{ code: heldCell("holding", "released") },
			{ text: "A done" },
			{ text: "B done" },
		]);
		expect((await world.cli(["-p", "start", "--model", "local/coder"])).stdout).toBe("first\n");
		const a = spawnCliText(["--continue", "-p", "slow one"], world.project, world.env);
		clients.push(a);
		await a.waitFor("stderr", "ipython: import time");
		const b = spawnCliText(["--continue", "-p", "quick one"], world.project, world.env);
		clients.push(b);
		await b.waitFor("stderr", " already; this runs there");
		const shared = (/The session is open in agent ([0-9a-f]{8}) already/.exec(b.stderr()) as RegExpExecArray)[1];
		// The first run's cell ends only once the second run's client has joined its worker.
		await eventually(
			"the second run to join the worker",
			async () => (await agent(world as DaemonWorld, shared as string)).clients === 2,
		);
		releaseHeldCell(world);
		expect(await a.exitCode()).toBe(0);
		expect(a.stdout()).toBe("A done\n");
		expect(await b.exitCode()).toBe(0);
		expect(b.stdout()).toBe("B done\n");
		await eventually("the shared worker to stop after its last run", async () =>
			(await world?.agents())?.every((info) => info.state === "saved"),
		);
	});

	it("a view attached to a one-shot run's worker keeps it: the run's end no longer stops it", async () => {
		world = await makeDaemonWorld([{ code: heldCell("holding", "released") }, { text: "Finished." }]);
		const run = spawnCli(["--mode", "json", "-p", "run it", "--model", "local/coder"], world.project, world.env);
		clients.push(run);
		await run.waitForEvent((event) => event.type === "tool_execution_update");
		const [oneShot] = await world.agents();
		const view = spawnCliText(["attach", oneShot?.key as string], world.project, world.env);
		clients.push(view);
		await view.waitFor("stderr", "Type a message");
		// The run ends only once the view has attached.
		releaseHeldCell(world);
		expect(await run.exitCode()).toBe(0);
		// The run's client has gone; the attached view keeps the worker, which stays after it detaches.
		expect((await agent(world, oneShot?.key as string)).state).toBe("idle");
		view.line("/exit");
		expect(await view.exitCode()).toBe(0);
		expect(view.stderr()).toContain(`Detached from agent ${oneShot?.key}; it keeps running.`);
		expect((await agent(world, oneShot?.key as string)).state).toBe("idle");
	});

	it("with its daemon folder unusable, -p runs in this process and says why; the daemon's commands stop with the cause", async () => {
		world = await makeDaemonWorld([{ text: "Answered here." }]);
		writeFileSync(join(world.home, "daemon"), "not a folder");
		const here = await world.cli(["-p", "hello", "--model", "local/coder"]);
		expect(here.code).toBe(0);
		expect(here.stdout).toBe("Answered here.\n");
		expect(here.stderr).toContain(
			`The daemon's folder ${join(world.home, "daemon")} cannot be used: ENOTDIR: not a directory, mkdir '${join(world.home, "daemon", "workers")}'; this run stays in this process. Fix the daemon's folder to run sessions in the background.\n`,
		);
		const listed = await world.cli(["agents"]);
		expect(listed.code).toBe(2);
		expect(listed.stderr).toContain("\nFix it, or run in this process with PRIME_AGENT_IN_PROCESS=1.\n");
	});

	it("a one-shot client that goes after its run has ended stops its worker at once, not after the grace period", async () => {
		world = await makeDaemonWorld([{ text: "line one\nline two\nline three" }], {
			PRIME_AGENT_ONESHOT_GRACE_MS: "180000",
		});
		// `prime-agent -p ... | head -1`: the reader goes after the first line, the client dies of EPIPE.
		const cli = spawnCliText(["-p", "say three lines", "--model", "local/coder"], world.project, world.env);
		clients.push(cli);
		await cli.waitFor("stdout", "line one");
		cli.child.stdout?.destroy();
		await cli.exitCode();
		const gone = Date.now();
		const [info] = (await world.agents()) as [AgentInfo];
		await eventually("the worker to stop", async () =>
			(await agent(world as DaemonWorld, info.key)).state === "saved" ? true : undefined,
		);
		expect(Date.now() - gone).toBeLessThan(60_000);
	});
});

describe("daemon recovery", () => {
	it("a worker killed mid-turn is restarted after 250 ms, 1 s and 5 s, and its tree is failed after the fourth crash", {
		timeout: 300_000,
	}, async () => {
		world = await makeDaemonWorld([{ code: LONG_CELL }]);
		const key = await detachMidRun(world, "run the long job");
		let info = await agent(world, key);
		expect(info.state).toBe("running");
		const sessionPath = info.sessionPath as string;
		const gaps: number[] = [];
		for (let crash = 1; crash <= 3; crash++) {
			const pid = info.pid as number;
			process.kill(pid, "SIGKILL");
			const killed = Date.now();
			info = await eventually(`restart ${crash}`, async () => {
				const now = await agent(world as DaemonWorld, key);
				return now.pid && now.pid !== pid && now.state === "idle" ? now : undefined;
			});
			gaps.push(Date.now() - killed);
			expect(info.crashes).toBe(crash);
			// The restarted worker continues the same session; the killed turn left only whole lines.
			expect(info.sessionPath).toBe(sessionPath);
			expect(roles(sessionRecords(sessionPath)).slice(0, 4)).toEqual(["session", "model_change", "user", "assistant"]);
		}
		expect(gaps[0]).toBeGreaterThanOrEqual(250);
		expect(gaps[1]).toBeGreaterThanOrEqual(1000);
		expect(gaps[2]).toBeGreaterThanOrEqual(5000);
		process.kill(info.pid as number, "SIGKILL");
		const failed = await eventually("the tree to fail", async () => {
			const now = await agent(world as DaemonWorld, key);
			return now.state === "failed" ? now : undefined;
		});
		expect(failed.failedReason).toBe("the worker was killed by SIGKILL (crash 4; restarted after 250 ms, 1 s, 5 s)");
		expect(failed.crashes).toBe(4);
		const listed = await world.cli(["agents"]);
		expect(listed.stdout).toContain(`${key}  failed  `);
	});

	it("a supervisor killed with SIGKILL is replaced by one that re-adopts live workers and resurrects no stopped one", {
		timeout: 300_000,
	}, async () => {
		world = await makeDaemonWorld([]);
		const live = await residentAgent(world);
		const stopped = await residentAgent(world);
		const intended = await residentAgent(world);
		const crashed = await residentAgent(world);
		const shutdown = await world.cli(["shutdown", stopped]);
		expect(shutdown.stdout).toBe(
			`Stopped agent ${stopped}; its session is saved: \`prime-agent attach ${stopped}\` starts it again.\n`,
		);
		const before = Object.fromEntries((await world.agents()).map((info) => [info.key, info]));
		const old = supervisor(world);
		process.kill(old.pid, "SIGKILL");
		await eventually("the supervisor to die", () => !isSameProcess(old.pid, old.startId));
		// While no supervisor runs: one worker is stopped as a supervisor would (intent first, then
		// the kill), another just dies.
		const paths = daemonPaths(world.home);
		const record = readWorkerRecord(paths, intended);
		writeFileSync(
			join(paths.workers, intended, "worker.json"),
			JSON.stringify({ ...record, stopRequestedAt: new Date().toISOString() }),
		);
		process.kill(before[intended]?.pid as number, "SIGKILL");
		process.kill(before[crashed]?.pid as number, "SIGKILL");

		const after = Object.fromEntries((await world.agents()).map((info) => [info.key, info]));
		expect(supervisor(world).pid).not.toBe(old.pid);
		expect(after[live]).toMatchObject({ state: "idle", pid: before[live]?.pid });
		expect(after[stopped]?.state).toBe("saved");
		expect(after[stopped]?.pid).toBe(undefined);
		const restarted = await eventually("the crashed worker to restart", async () => {
			const now = await agent(world as DaemonWorld, crashed);
			return now.state === "idle" ? now : undefined;
		});
		expect(restarted.crashes).toBe(1);
		expect(restarted.pid).not.toBe(before[crashed]?.pid);
		expect((await agent(world, intended)).state).toBe("saved");
		// The adopted worker is watched too: its crash is noticed and recovered.
		process.kill(before[live]?.pid as number, "SIGKILL");
		const readopted = await eventually("the adopted worker to restart", async () => {
			const now = await agent(world as DaemonWorld, live);
			return now.state === "idle" && now.pid !== before[live]?.pid ? now : undefined;
		});
		expect(readopted.crashes).toBe(1);
	});

	it("a one-shot worker restarted after it and its client were killed stops after the grace period, with no client to wait for", {
		timeout: 240_000,
	}, async () => {
		world = await makeDaemonWorld([{ code: LONG_CELL }], { PRIME_AGENT_ONESHOT_GRACE_MS: "3000" });
		const cli = await longOneShotRun(world);
		const key = String(cli.events[0]?.agent);
		const pid = (await agent(world, key)).pid as number;
		cli.child.kill("SIGKILL");
		process.kill(pid, "SIGKILL");
		await cli.exitCode();
		const restarted = await eventually("the worker to restart", async () => {
			const now = await agent(world as DaemonWorld, key);
			return now.pid && now.pid !== pid ? now : undefined;
		});
		expect(restarted.crashes).toBe(1);
		await eventually("the restarted worker to stop", async () =>
			(await agent(world as DaemonWorld, key)).state === "saved" ? true : undefined,
		);
		expect(readSessionRecord(daemonPaths(world.home), key)?.stopReason).toBe("its one-shot client disconnected");
		expect(isSameProcess(restarted.pid as number, readWorkerRecord(daemonPaths(world.home), key)?.startId)).toBe(false);
	});

	it("a starting supervisor keeps the newest finished one-shot records and every other agent", async () => {
		world = await makeDaemonWorld([]);
		const paths = daemonPaths(world.home);
		const record = (key: string, owner: "oneshot" | "resident", minute: number) => {
			writeWorkerRecord(paths, {
				key,
				owner,
				options: { cwd: world?.project ?? "" },
				env: {},
				crashes: 0,
				createdAt: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
			});
			writeSessionRecord(paths, key, {
				pid: 1,
				busy: false,
				lastActivity: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
				clients: 0,
				stoppedAt: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
				stopReason: "its one-shot run ended",
				schedules: 0,
			});
		};
		record("00000000", "resident", 0);
		const oneShots = Array.from({ length: KEPT_FINISHED_ONE_SHOTS + 2 }, (_, i) =>
			(i + 1).toString(16).padStart(8, "0"),
		);
		for (const [i, key] of oneShots.entries()) record(key, "oneshot", i + 1);
		const keys = (await world.agents()).map((info) => info.key);
		expect(keys).toEqual(["00000000", ...oneShots.slice(2)]);
		expect(existsSync(join(paths.workers, oneShots[0] as string))).toBe(false);
	});

	it("supervisors started at the same moment on a fresh home: one listens, the others leave at once", async () => {
		world = await makeDaemonWorld([]);
		const paths = daemonPaths(world.home);
		mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
		writeFileSync(join(paths.dir, "token"), "t".repeat(64), { mode: 0o600 });
		const main = fileURLToPath(new URL("../dist/daemon/supervisor-main.js", import.meta.url));
		const started = Array.from({ length: 6 }, () => {
			const child = spawn(process.execPath, [main], { env: world?.env, stdio: ["ignore", "ignore", "pipe"] });
			clients.push({ child });
			let stderr = "";
			child.stderr.on("data", (chunk) => {
				stderr += chunk;
			});
			return { child, stderr: () => stderr };
		});
		const listening = () => started.filter((one) => one.stderr().includes("listening")).length;
		await eventually("a supervisor to listen", () => listening() > 0);
		// Losers see the lock held and exit; one that took the lock by mistake would listen too (its
		// line stays counted), and leave within 2 s.
		await eventually(
			"all supervisors but one to leave",
			() => started.filter((one) => one.child.exitCode === null && one.child.signalCode === null).length === 1,
		);
		expect(listening()).toBe(1);
		expect(started.filter((one) => one.child.exitCode === null).length).toBe(1);
		// The lock is written aside and linked into place: no side file stays behind.
		const lockName = basename(paths.supervisor);
		expect(readdirSync(paths.dir).filter((name) => name.startsWith(`${lockName}.`))).toEqual([]);
		const survivor = started.find((one) => one.child.exitCode === null);
		expect(JSON.parse(readFileSync(paths.supervisor, "utf8")).pid).toBe(survivor?.child.pid);
	});

	it("a daemon of another version: -p runs in this process and says so; `shutdown` stops the old daemon", async () => {
		world = await makeDaemonWorld([{ text: "Answered here." }, { text: "Answered by a worker." }]);
		const paths = daemonPaths(world.home);
		mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
		// An older build's supervisor: it refuses every hello of this protocol, as theirs do.
		const old = spawn(process.execPath, ["-e", OLD_SUPERVISOR, paths.socket], { stdio: ["ignore", "pipe", "inherit"] });
		clients.push({ child: old });
		const oldExit = new Promise<NodeJS.Signals | null>((resolve) => old.on("exit", (_code, signal) => resolve(signal)));
		await once(old.stdout, "data");
		writeFileSync(paths.supervisor, JSON.stringify({ pid: old.pid, startId: processStartId(old.pid as number) }));
		const other = `it speaks protocol 0, this one ${DAEMON_PROTOCOL_VERSION}`;

		const here = await world.cli(["-p", "hello", "--model", "local/coder"]);
		expect(here.code).toBe(0);
		expect(here.stdout).toBe("Answered here.\n");
		expect(here.stderr).toContain(
			`The agent daemon running is from another version of prime-agent (${other}); this run stays in this process. \`prime-agent shutdown\` stops the old daemon (its agents' sessions are saved).\n`,
		);
		const listed = await world.cli(["agents"]);
		expect(listed.code).toBe(2);
		expect(listed.stderr).toContain(
			`The agent daemon running is from another version of prime-agent (${other}).\n\`prime-agent shutdown\` stops it`,
		);
		const shutdown = await world.cli(["shutdown"]);
		expect(shutdown.code).toBe(0);
		expect(shutdown.stdout).toBe(
			`Stopped the agent daemon of another version (${other}) and its agents; their sessions are saved.\n`,
		);
		expect(await oldExit).toBe("SIGTERM");
		const worker = await world.cli(["-p", "hello again", "--model", "local/coder"]);
		expect(worker.code).toBe(0);
		expect(worker.stdout).toBe("Answered by a worker.\n");
		expect(worker.stderr).toBe("");
	});
});

describe("heartbeats and schedules", () => {
	it("a schedule survives a worker restart, fires once, and does not fire again after another restart", {
		timeout: 240_000,
	}, async () => {
		world = await makeDaemonWorld([{ text: "One request." }, { text: "Tick done." }, { text: "Still here." }]);
		// A finished -p run's agent in this directory is not a candidate: the resident one is picked.
		expect((await world.cli(["-p", "one request", "--model", "local/coder"])).code).toBe(0);
		const key = await residentAgent(world);
		// Due well after the kill below, however loaded the machine.
		const scheduled = await world.cli(["schedule", "in 15s", "say tick"]);
		expect(scheduled.code).toBe(0);
		const id = (/^Scheduled ([0-9a-f]{6}) for agent /.exec(scheduled.stdout) as RegExpExecArray)[1];
		// Killed before it is due: the restarted worker fires it.
		process.kill((await agent(world, key)).pid as number, "SIGKILL");
		const fired = await eventually("the schedule to fire", async () => {
			const info = await agent(world as DaemonWorld, key);
			// The turn it started has ended: its answer is in the session file.
			const answered =
				info.sessionPath &&
				existsSync(info.sessionPath) &&
				readFileSync(info.sessionPath, "utf8").includes("Tick done.");
			return answered && info.crashes === 1 ? info : undefined;
		});
		const userTexts = () =>
			sessionRecords(fired.sessionPath as string)
				.filter((record) => record.type === "message" && (record.message as { role: string }).role === "user")
				.map((record) => JSON.stringify((record.message as { content: unknown }).content));
		expect(userTexts().length).toBe(1);
		expect(userTexts()[0]).toContain(`[schedule ${id}] say tick`);
		// Killed after it fired: the next worker does not fire it again.
		process.kill(fired.pid as number, "SIGKILL");
		await eventually("the second restart", async () => {
			const info = await agent(world as DaemonWorld, key);
			return info.crashes === 2 && info.state === "idle" ? info : undefined;
		});
		// A prompt to that worker runs after anything its start queued: a second firing (due at once
		// on start) would come before it.
		const after = await world.cli(["--resume", fired.sessionPath as string, "-p", "are you there"]);
		expect(after.stdout).toBe("Still here.\n");
		expect(userTexts().length).toBe(2);
		expect(userTexts()[1]).toContain("are you there");
		// The -p run's call, the one firing and the last prompt.
		expect(world.server.requests.length).toBe(3);
		const list = await world.cli(["schedule", "list", "--agent", key]);
		expect(list.stdout).toBe("No heartbeat or schedules.\n");
	});

	it("a heartbeat keeps an idle agent resident while one without is evicted; a heartbeat under 10 s is refused", async () => {
		world = await makeDaemonWorld(
			[{ code: 'beat = await rlm_heartbeat("10m", "check the build")\nprint(beat["every"])' }, { text: "Set." }],
			{ PRIME_AGENT_IDLE_EVICT_MS: "2000" },
		);
		const chat = spawnCliText(["--model", "local/coder"], world.project, world.env);
		clients.push(chat);
		chat.line("/heartbeat 5s");
		await chat.waitFor("stderr", "A heartbeat of 5s is too frequent: the shortest interval is 10s.");
		// The kernel sets it: rlm_heartbeat(...).
		chat.line("keep an eye on the build");
		await chat.waitFor("stdout", "Set.");
		chat.line("/heartbeat");
		await chat.waitFor("stderr", "Heartbeat every 10m (next ");
		expect(chat.stderr()).toContain("): check the build\n");
		chat.line("/exit");
		await chat.exitCode();
		const beating = detachedKey(chat.stderr());
		const plain = await residentAgent(world);
		const evicted = await eventually("the plain agent to be evicted", async () => {
			const info = await agent(world as DaemonWorld, plain);
			return info.state === "saved" ? info : undefined;
		});
		expect(evicted.state).toBe("saved");
		expect(readSessionRecord(daemonPaths(world.home), plain)?.stopReason).toBe(
			"idle for 2s with no client, heartbeat, schedule or work",
		);
		const resident = await agent(world, beating);
		expect(resident).toMatchObject({ state: "idle", heartbeat: "600s" });
		expect(Date.now() - Date.parse(resident.lastActivity as string)).toBeGreaterThan(2000);
	});
});

/** A stand-in for an older build's supervisor on the socket given: every hello is refused as protocol 0. */
const OLD_SUPERVISOR = `
const net = require("node:net");
net.createServer((socket) => {
	let buffer = "";
	socket.on("data", (chunk) => {
		buffer += chunk;
		const lines = buffer.split("\\n");
		buffer = lines.pop();
		for (const line of lines) {
			const { id } = JSON.parse(line);
			const hint = "Run \\\`prime-agent shutdown\\\` to stop the old daemon, then try again.";
			socket.end(JSON.stringify({ type: "reply", id, ok: false, message: "The daemon speaks protocol 0, the client ${DAEMON_PROTOCOL_VERSION}.", hint }) + "\\n");
		}
	});
}).listen(process.argv[1], () => console.log("listening"));
`;
