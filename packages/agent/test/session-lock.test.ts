import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { alive } from "./agent-scripts.js";
import { type CliProcess, runCliText, spawnCli } from "./cli-process.js";
import { kernelPythonForTests } from "./kernel-python.js";
import { type HoldingServer, localModelWorld, openAiCompletionsServer } from "./loopback-servers.js";
import type { TempWorld } from "./temp-home.js";
import { makeTempWorld } from "./temp-home.js";

let world: TempWorld | undefined;
let server: { close(): Promise<void> } | undefined;
const running: CliProcess[] = [];
afterEach(async () => {
	for (const cli of running.splice(0)) {
		cli.child.kill("SIGKILL");
		await cli.exitCode();
	}
	await server?.close();
	server = undefined;
	world?.cleanup();
	world = undefined;
});

const MODEL = ["--model", "local/coder"];

/** The cell that holds the run: prints, then waits for `path` to appear. */
const waitForFile = (path: string) =>
	`import os, time\nprint("holding", flush=True)\nwhile not os.path.exists(${JSON.stringify(path)}): time.sleep(0.05)`;

function lines(path: string): number {
	return readFileSync(path, "utf8").split("\n").length;
}

it("a second run of a session another process runs is refused, naming that process; kill -9 of the holder frees the session", {
	timeout: 120_000,
}, async () => {
	const made = await localModelWorld([
		{ text: "one" },
		{ code: waitForFile("/nonexistent/never") },
		{ text: "back again" },
	]);
	world = made.world;
	server = made.server;
	const first = await runCliText(["-p", "start", ...MODEL], world.project, world.env);
	expect(first.code).toBe(0);
	const [file] = readdirSync(join(world.home, "sessions")).filter((name) => name.endsWith(".jsonl"));
	const id = (file as string).replace(/\.jsonl$/, "");
	const path = join(world.home, "sessions", file as string);

	// A holds the session, its cell running.
	const holder = spawnCli(["--mode", "json", "-r", id, "-p", "wait", ...MODEL], world.project, world.env);
	running.push(holder);
	await holder.waitForEvent((event) => event.type === "tool_execution_update");
	const before = readFileSync(path, "utf8");
	const requests = made.server.requests.length;

	// B, by an id prefix and by -c: refused before anything is sent or written, naming A.
	const pid = holder.child.pid as number;
	for (const pick of [["-r", id.slice(0, 8)], ["-c"]]) {
		const second = await runCliText([...pick, "-p", "me too", ...MODEL], world.project, world.env);
		expect(second.code).toBe(2);
		expect(second.stdout).toBe("");
		expect(second.stderr.replace(/since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/, "since <time>")).toBe(
			`Error: Session ${id} is in use by another prime-agent process (process ${pid}, since <time>): two runs of one session would write into each other's conversation and kernel state.\n` +
				`Wait for that run to end, or stop it (\`kill ${pid}\`), then resume again; or go on from a copy of it beside that run: \`prime-agent --fork ${id}\`.\n`,
		);
	}
	expect(readFileSync(path, "utf8")).toBe(before);
	expect(made.server.requests.length).toBe(requests);

	// The holder dies without releasing anything: its lock no longer holds the session.
	holder.child.kill("SIGKILL");
	await holder.exitCode();
	expect(existsSync(join(world.home, "sessions", `${id}.lock`))).toBe(true);
	const third = await runCliText(["-r", id, "-p", "again", ...MODEL], world.project, world.env);
	expect(third.stderr).toBe("");
	expect(third.code).toBe(0);
	expect(third.stdout).toBe("back again\n");
	expect(lines(path)).toBeGreaterThan(before.split("\n").length);
	// The run that ended released it.
	expect(existsSync(join(world.home, "sessions", `${id}.lock`))).toBe(false);
});

it("a run killed before its session's first answer leaves a lock and no session file; the next start removes that lock", {
	timeout: 120_000,
}, async () => {
	const holding: HoldingServer = await openAiCompletionsServer([], { hold: () => true });
	server = holding;
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	world.writeHome("models.json", {
		providers: { local: { baseUrl: holding.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
	});
	const cli = spawnCli(["--mode", "json", "-p", "hello", ...MODEL], world.project, world.env);
	running.push(cli);
	await holding.held(0);
	const sessions = join(world.home, "sessions");
	const locks = () => readdirSync(sessions).filter((name) => name.endsWith(".lock"));
	expect(locks()).toHaveLength(1);
	expect(readdirSync(sessions).filter((name) => name.endsWith(".jsonl"))).toEqual([]);
	cli.child.kill("SIGKILL");
	await cli.exitCode();
	expect(alive(cli.child.pid as number)).toBe(false);
	expect(locks()).toHaveLength(1);

	const listed = await runCliText(["sessions"], world.project, world.env);
	expect(listed.code).toBe(0);
	// Any session start sweeps: one that needs no model call.
	const status = await runCliText(["-p", "/pc status", ...MODEL], world.project, world.env);
	expect(status.code).toBe(0);
	expect(locks()).toEqual([]);
});
