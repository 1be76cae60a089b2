import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { spawnCli, spawnCliText, type TextCliProcess } from "prime-agent-test-support/cli-process";
import {
	type DaemonWorld,
	endDaemonTest,
	eventually,
	makeDaemonWorld,
	type Spawned,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AgentInfo, daemonPaths, workerKeys } from "../src/daemon/index.js";
import { ExitCode } from "../src/errors.js";
import { RUNNING_CALL_FILE, readRunningCall } from "../src/unfinished-calls/index.js";

// Real processes: a supervisor, workers, kernels, and a command line started for each step.
vi.setConfig({ testTimeout: 120_000 });

let world: DaemonWorld | undefined;
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(world, clients);
	world = undefined;
});

/** Prints three ticks, then works quietly for two minutes. */
const TICKING_CELL = "import time\nfor i in range(3):\n    print(f'tick {i}', flush=True)\ntime.sleep(120)";
const TICKS = "tick 0\ntick 1\ntick 2\n";
/** What the model reads for TICKING_CELL when its worker is killed after the ticks. */
const CUT_OFF_RESULT =
	"tick 0\ntick 1\ntick 2\n[the cell did not finish: the agent process running this session stopped (it crashed or was killed) while it ran, and its kernel stopped with it. The output above is what it printed until then; the rest, and its result, are lost. The next cell runs in a new kernel.]";

/** The running agent (the only one, or `key`) with its session's artifact folder. */
async function runningAgent(w: DaemonWorld, key?: string): Promise<AgentInfo & { artifacts: string }> {
	return eventually("the agent to run its cell", async () => {
		const info = (await w.agents()).find(
			(agent) => agent.state === "running" && (key === undefined || agent.key === key),
		);
		return info?.state === "running" && info.pid && info.sessionPath
			? { ...info, artifacts: info.sessionPath.replace(/\.jsonl$/, "") }
			: undefined;
	});
}

/** SIGKILL the worker once the ticks are recorded; resolves once the supervisor has restarted it. */
async function killAfterTicks(w: DaemonWorld, key?: string): Promise<AgentInfo & { artifacts: string }> {
	const info = await runningAgent(w, key);
	await eventually(
		"the ticks to be recorded beside the session",
		() => readRunningCall(info.artifacts)?.output === TICKS,
	);
	process.kill(info.pid as number, "SIGKILL");
	await eventually("the restart", async () => {
		const now = (await w.agents()).find((agent) => agent.key === info.key);
		return now?.pid && now.pid !== info.pid && now.state === "idle" ? now : undefined;
	});
	return info;
}

/** The JSON lines a text-mode process printed so far. */
function jsonLines(cli: TextCliProcess): Record<string, unknown>[] {
	return cli
		.stdout()
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("a worker killed while a cell runs", () => {
	it("keeps the cell's output: the model is told the cell was cut off, with it; the line chat follows the restart", async () => {
		world = await makeDaemonWorld([{ code: TICKING_CELL }, { text: "The job was cut off." }]);
		const chat = spawnCliText(["--model", "local/coder"], world.project, world.env);
		clients.push(chat);
		chat.line("run the ticking job");
		await chat.waitFor("stderr", "▸ ipython: import time");
		const { key, sessionPath, artifacts } = await killAfterTicks(world);
		await chat.waitFor("stderr", `Reconnected to agent ${key} after its worker restarted`);
		expect(chat.stderr()).toContain(
			"\nThe agent's worker stopped during this run; the supervisor restarts it from the session's last saved entry.\n" +
				"The agent's worker stopped unexpectedly; waiting for the supervisor to restart it…\n",
		);
		// The restarted worker recorded the cell's result: what it printed, and what happened.
		const results = sessionRecords(sessionPath as string).filter(
			(record) => (record.message as { role?: string } | undefined)?.role === "toolResult",
		);
		expect(results).toHaveLength(1);
		const result = (results[0] as { message: Record<string, unknown> }).message;
		expect(result.content).toEqual([{ type: "text", text: CUT_OFF_RESULT }]);
		expect(result).toMatchObject({ isError: true, details: { status: "died", stdout: TICKS, cutOff: true } });
		expect(existsSync(`${artifacts}/${RUNNING_CALL_FILE}`)).toBe(false);
		// The chat goes on in the restarted worker, and the model reads the cut-off cell.
		chat.line("what happened?");
		await chat.waitFor("stdout", "The job was cut off.");
		const sent = (world.server.requests[1] as { messages: { role: string; content: unknown }[] }).messages;
		expect(sent.filter((message) => message.role === "tool").map((message) => message.content)).toEqual([
			CUT_OFF_RESULT,
		]);
		chat.line("/exit");
		expect(await chat.exitCode()).toBe(0);
		expect(chat.stderr()).toContain(`Detached from agent ${key}; it keeps running.`);
	});
});

describe("attach --mode json", () => {
	it("prints the lines -p --mode json prints, follows a restarted worker, and ends with the worker's bye", {
		timeout: 180_000,
	}, async () => {
		world = await makeDaemonWorld([
			{ code: "print(6 * 7)" },
			{ text: "It is 42." },
			{ code: "print(6 * 7)" },
			{ text: "It is 42." },
			{ code: TICKING_CELL },
		]);
		const print = spawnCli(
			["--mode", "json", "-p", "what is 6 * 7?", "--model", "local/coder"],
			world.project,
			world.env,
		);
		clients.push(print);
		expect(await print.exitCode()).toBe(0);
		const chat = await world.cli(["--model", "local/coder"], "/exit\n");
		const key = /Detached from agent ([0-9a-f]{8})/.exec(chat.stderr)?.[1] as string;
		expect(key).toMatch(/^[0-9a-f]{8}$/);

		const attached = spawnCliText(["attach", key, "--mode", "json"], world.project, world.env);
		clients.push(attached);
		attached.line("what is 6 * 7?");
		await attached.waitFor("stdout", '"type":"result"');
		const lines = jsonLines(attached);
		expect(lines[0]).toMatchObject({ type: "session", agent: key, model: "local/coder", resumed: false });
		// The same lines as -p --mode json, in the same order, to the same result.
		expect(lines.map((line) => line.type)).toEqual(print.events.map((event) => event.type));
		expect(lines.at(-1)).toMatchObject({ type: "result", status: "ok", exitCode: 0, sessionPersisted: true });
		expect(lines.find((line) => line.type === "tool_execution_end")).toMatchObject({
			result: { content: [{ type: "text", text: "42" }] },
		});

		// The worker killed during this view's run: the run ends with an error, the view follows the restart.
		const before = lines.length;
		attached.line("run the ticking job");
		await killAfterTicks(world, key);
		await attached.waitFor("stdout", '"type":"reconnected"');
		const ends = jsonLines(attached)
			.slice(before)
			.filter((line) => ["result", "reconnecting", "reconnected"].includes(String(line.type)));
		expect(ends).toEqual([
			{
				type: "result",
				status: "error",
				exitCode: 1,
				message:
					"The agent's worker stopped during this run; the supervisor restarts it from the session's last saved entry.",
			},
			{ type: "reconnecting" },
			{ type: "reconnected" },
		]);

		// Stopped for good: the view says why and ends.
		const stopped = await world.cli(["shutdown", key]);
		expect(stopped.code).toBe(0);
		expect(await attached.exitCode()).toBe(0);
		expect(jsonLines(attached).at(-1)).toEqual({ type: "bye", reason: "it was shut down" });
	});
});

/**
 * An extension (`-e`) that records each load in `loads` beside it, then, while the file `refuse` is
 * there, says so on stderr and ends its worker's process with code 3: a worker that dies before its
 * session starts.
 */
const EXITING_EXTENSION = [
	'import { appendFileSync, existsSync } from "node:fs";',
	'appendFileSync(new URL("./loads", import.meta.url), "loaded\\n");',
	'if (existsSync(new URL("./refuse", import.meta.url))) {',
	'  console.error("exits.mjs: refusing to load");',
	"  process.exit(3);",
	"}",
	"export default function () {}",
].join("\n");
/** What the worker's start failure says, its log's last line included. */
const EXITED = "The worker exited with code 3 before its session started. Its log ends:\nexits.mjs: refusing to load";

describe("a worker that exits before its session starts", () => {
	it("fails the request that started it with why, and is not restarted: the supervisor's log says so", async () => {
		world = await makeDaemonWorld([{ text: "Started." }]);
		const w = world;
		const paths = daemonPaths(w.home);
		const loads = () => readFileSync(join(w.project, "loads"), "utf8");
		w.writeProject("exits.mjs", EXITING_EXTENSION);
		w.writeProject("refuse", "");

		// A new agent: the run fails with what its log said, and nothing of the agent is left.
		const refused = await w.cli(["-p", "hi", "--model", "local/coder", "-e", "./exits.mjs"]);
		expect(refused.stderr).toBe(`Error: ${EXITED}\nTry again; \`prime-agent doctor\` checks the setup.\n`);
		expect(refused.code).toBe(ExitCode.usage);
		expect(await w.agents()).toEqual([]);
		expect(loads()).toBe("loaded\n");

		// A saved agent started again (`attach`): the same, and the agent reads failed with why.
		rmSync(join(w.project, "refuse"));
		const started = await w.cli(["-p", "hi", "--model", "local/coder", "-e", "./exits.mjs"]);
		expect(started.stdout).toBe("Started.\n");
		const [key] = workerKeys(paths) as [string];
		w.writeProject("refuse", "");
		const attached = await w.cli(["attach", key]);
		// Only what this worker wrote (the earlier one's lines are in the log too).
		expect(attached.stderr).toBe(`Error: ${EXITED}\nSee ${paths.workers}/${key}/worker.log.\n`);
		expect(attached.code).toBe(ExitCode.usage);
		const [agent] = await w.agents();
		// No crash counted and no restart due (one would read "starting"): nothing starts it again.
		expect(agent).toMatchObject({
			key,
			state: "failed",
			crashes: 0,
			failedReason: "the worker exited with code 3 before its session started",
		});
		expect(loads()).toBe("loaded\nloaded\nloaded\n");
		expect(
			readFileSync(paths.log, "utf8")
				.split("\n")
				.filter((line) => line.startsWith("Agent ")),
		).toEqual([
			expect.stringMatching(
				/^Agent [0-9a-f]{8}: the worker exited with code 3 before its session started; not restarted\.$/,
			),
			`Agent ${key}: the worker exited with code 3 before its session started; not restarted.`,
		]);

		// `attach` tries again, and starts it once the extension lets it.
		rmSync(join(w.project, "refuse"));
		const again = await w.cli(["attach", key], "/exit\n");
		expect(again.code).toBe(0);
		expect((await w.agents())[0]).toMatchObject({ key, state: "idle", crashes: 0 });
	});
});
