import { type CliProcess, spawnCli } from "prime-agent-test-support/cli-process";
import { type DaemonWorld, endDaemonTest, makeDaemonWorld, type Spawned } from "prime-agent-test-support/daemon-world";
import type { ScriptedReply } from "prime-agent-test-support/loopback-servers";
import { afterEach, describe, expect, it, vi } from "vitest";

// Real processes: the command line, a supervisor and a worker (or none in process), kernels, a loopback model.
vi.setConfig({ testTimeout: 240_000 });

const worlds: DaemonWorld[] = [];
const clients: Spawned[] = [];
afterEach(async () => {
	await endDaemonTest(undefined, clients);
	for (const world of worlds.splice(0)) await world.teardown();
});

/** Keys whose values differ from one run to the next (or name the world or the worker), not in meaning. */
const VOLATILE = new Set(["id", "path", "cwd", "timestamp", "durationMs", "pid", "toolCallId", "responseId"]);

/** A line with what names this run (ids, times, the world's folders, the session) replaced by its key; the rest as it was. */
function stable(value: unknown, world: DaemonWorld, session: string): unknown {
	if (Array.isArray(value)) return value.map((item) => stable(item, world, session));
	if (typeof value === "string")
		return value
			.replaceAll(world.server.baseUrl, "<model server>")
			.replaceAll(world.project, "<project>")
			.replaceAll(world.home, "<home>")
			.replaceAll(session, "<session>");
	if (value === null || typeof value !== "object") return value;
	return Object.fromEntries(
		Object.entries(value).map(([key, item]) => [key, VOLATILE.has(key) ? `<${key}>` : stable(item, world, session)]),
	);
}

/** What a test does to the running command line (Ctrl-C, a signal) once it has started. */
type Drive = (cli: CliProcess) => Promise<void>;

/** `--mode json -p prompt` on a loopback model answering `script`, in this process or in a daemon worker. */
async function jsonRun(script: ScriptedReply[], prompt: string, inProcess: boolean, drive?: Drive) {
	const world = await makeDaemonWorld(script);
	worlds.push(world);
	if (inProcess) world.env.PRIME_AGENT_IN_PROCESS = "1";
	const cli = spawnCli(["--mode", "json", "-p", prompt, "--model", "local/coder"], world.project, world.env);
	clients.push(cli);
	await drive?.(cli);
	const code = await cli.exitCode();
	// The worker's session line names its agent (`attach` takes it); in process there is none.
	const [session, ...rest] = cli.events;
	const { agent, ...line } = session ?? {};
	const id = String(session?.id);
	return { code, agent, lines: [line, ...rest].map((each) => stable(each, world, id)) };
}

/** The same scripted run both ways: the exit code and every JSON line, in order. */
async function bothWays(script: ScriptedReply[], prompt: string, drive?: Drive) {
	const here = await jsonRun(script, prompt, true, drive);
	const worker = await jsonRun(script, prompt, false, drive);
	return { here, worker };
}

/** A cell that prints, then waits (numbered, so the model's two calls differ). */
const longCell = (n: number) => `import time\nprint('working ${n}', flush=True)\ntime.sleep(120)`;

/** Whether `event` is streamed output of the cell that printed `working n`. */
const printed = (n: number) => (event: Record<string, unknown>) =>
	event.type === "tool_execution_update" && JSON.stringify(event).includes(`working ${n}`);

describe("--mode json in process and through a daemon worker", () => {
	it("prints the same lines for a cell and an answer", async () => {
		const { here, worker } = await bothWays([{ code: "print(6 * 7)" }, { text: "It is 42." }], "what is 6 * 7?");
		expect(here.code).toBe(0);
		expect(worker.code).toBe(0);
		expect(here.agent).toBeUndefined();
		expect(worker.agent).toMatch(/^[0-9a-f]{8}$/);
		expect(worker.lines).toEqual(here.lines);
		expect(here.lines.at(-1)).toMatchObject({ type: "result", status: "ok", exitCode: 0 });
	});

	it("prints the same lines and exit code when the model fails", async () => {
		const { here, worker } = await bothWays(
			[{ status: 400, error: "the model refused the request" }],
			"what is 6 * 7?",
		);
		expect(here.code).toBe(1);
		expect(worker.code).toBe(1);
		expect(worker.lines).toEqual(here.lines);
		const result = here.lines.at(-1) as { type: string; message: string };
		expect(result.type).toBe("result");
		expect(result.message).toContain("The model local/coder");
	});

	it("prints the same lines when Ctrl-C interrupts a cell, and a second Ctrl-C stops the run (exit 130)", async () => {
		const { here, worker } = await bothWays(
			[{ code: longCell(1) }, { code: longCell(2) }],
			"run the long jobs",
			async (cli) => {
				await cli.waitForEvent(printed(1));
				cli.child.kill("SIGINT");
				await cli.waitForEvent(printed(2));
				cli.child.kill("SIGINT");
			},
		);
		expect(here.code).toBe(130);
		expect(worker.code).toBe(130);
		const interrupts = (lines: unknown[]) => lines.filter((line) => (line as { type: string }).type === "interrupt");
		expect(interrupts(here.lines)).toEqual([
			{ type: "interrupt", action: "cell" },
			{ type: "interrupt", action: "exit" },
		]);
		expect(worker.lines).toEqual(here.lines);
		expect(here.lines.at(-1)).toMatchObject({
			type: "result",
			status: "aborted",
			exitCode: 130,
			message: "Interrupted. The session is saved: resume it with `prime-agent --resume <session>`.",
		});
	});

	it("prints the same lines when SIGTERM ends the run mid-cell", async () => {
		const { here, worker } = await bothWays([{ code: longCell(1) }], "run the long job", async (cli) => {
			await cli.waitForEvent(printed(1));
			cli.child.kill("SIGTERM");
		});
		expect(here.code).toBe(130);
		expect(worker.code).toBe(130);
		expect(here.lines.filter((line) => (line as { type: string }).type === "interrupt")).toEqual([
			{ type: "interrupt", action: "exit", signal: "SIGTERM" },
		]);
		expect(worker.lines).toEqual(here.lines);
	});
});
