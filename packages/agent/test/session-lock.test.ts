import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import {
	type CliProcess,
	runCliText,
	spawnCli,
	spawnCliText,
	type TextCliProcess,
} from "prime-agent-test-support/cli-process";
import { type DaemonWorld, endDaemonTest, makeDaemonWorld } from "prime-agent-test-support/daemon-world";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { localModelWorld } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, expect, it } from "vitest";

const sessions = useFauxSessions({ provider: "fauxlock", models: [{ id: "l" }] });
let world: TempWorld | undefined;
let server: { close(): Promise<void> } | undefined;
let daemon: DaemonWorld | undefined;
const running: (CliProcess | TextCliProcess)[] = [];
afterEach(async () => {
	await endDaemonTest(daemon, []);
	daemon = undefined;
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
const SINCE = /since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/;

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
		expect(second.stderr.replace(SINCE, "since <time>")).toBe(
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
	// Its cell was cut off: the resumed run says so (the model gets the output recorded until then).
	expect(third.stderr).toBe(
		"The last run of this session stopped before a cell's result was saved (its process crashed or was killed): the model is told, with the output recorded until then.\n",
	);
	expect(third.code).toBe(0);
	expect(third.stdout).toBe("back again\n");
	expect(lines(path)).toBeGreaterThan(before.split("\n").length);
	// The run that ended released it.
	expect(existsSync(join(world.home, "sessions", `${id}.lock`))).toBe(false);
});

it("a new session is locked from its first answer on: -c while its cell runs is refused; the run's end releases it", {
	timeout: 120_000,
}, async () => {
	const marker = "release-me";
	const made = await localModelWorld([{ code: waitForFile(marker) }, { text: "done" }, { text: "next" }]);
	world = made.world;
	server = made.server;
	const first = spawnCli(["--mode", "json", "-p", "go", ...MODEL], world.project, world.env);
	running.push(first);
	await first.waitForEvent((event) => event.type === "tool_execution_update");
	const { path } = first.events[0] as { path: string };
	const id = (path.split("/").pop() as string).replace(/\.jsonl$/, "");
	const lock = join(world.home, "sessions", `${id}.lock`);
	expect(existsSync(lock)).toBe(true);

	const second = await runCliText(["-c", "-p", "me too", ...MODEL], world.project, world.env);
	expect(second.code).toBe(2);
	expect(second.stderr.split("\n")[0]?.replace(SINCE, "since <time>")).toBe(
		`Error: Session ${id} is in use by another prime-agent process (process ${first.child.pid}, since <time>): two runs of one session would write into each other's conversation and kernel state.`,
	);

	writeFileSync(join(world.project, marker), "1");
	expect(await first.exitCode()).toBe(0);
	expect(existsSync(lock)).toBe(false);
	const third = await runCliText(["-c", "-p", "next", ...MODEL], world.project, world.env);
	expect(third.stderr).toBe("");
	expect(third.stdout).toBe("next\n");
	expect(made.server.requests).toHaveLength(3);
});

it("a session a background agent runs is refused to an in-process run, which is told to attach to that agent", {
	timeout: 180_000,
}, async () => {
	daemon = await makeDaemonWorld([{ code: waitForFile("/nonexistent/never") }]);
	const chat = spawnCliText(MODEL, daemon.project, daemon.env);
	running.push(chat);
	chat.line("hold on");
	await chat.waitFor("stderr", "ipython: import os");
	chat.line("/exit");
	expect(await chat.exitCode()).toBe(0);
	const [agent] = await daemon.agents();
	const { key, pid, sessionId } = agent as { key: string; pid: number; sessionId: string };

	const here = await runCliText(["-r", sessionId, "-p", "me too", ...MODEL], daemon.project, {
		...daemon.env,
		PRIME_AGENT_IN_PROCESS: "1",
	});
	expect(here.code).toBe(2);
	expect(here.stderr.replace(SINCE, "since <time>")).toBe(
		`Error: Session ${sessionId} is in use by background agent ${key} (process ${pid}, since <time>): two runs of one session would write into each other's conversation and kernel state.\n` +
			`Join that run with \`prime-agent attach ${key}\`, or stop it with \`prime-agent shutdown ${key}\` and resume again; or go on from a copy of it beside that run: \`prime-agent --fork ${sessionId}\`.\n`,
	);
	expect(daemon.server.requests).toHaveLength(1);
});

it("one process opening a session it already runs is refused until the first run is disposed", {
	timeout: 120_000,
}, async () => {
	sessions.faux.setResponses([fauxAssistantMessage("one"), fauxAssistantMessage("two")]);
	const first = await sessions.start();
	expect((await first.agentSession.prompt("start")).status).toBe("ok");
	const id = first.session.id;
	const refused = await sessions.start({ resume: id }).catch((error: Error & { hint?: string }) => error);
	expect(refused).toBeInstanceOf(Error);
	expect((refused as Error).message.replace(SINCE, "since <time>")).toBe(
		`Session ${id} is in use by this prime-agent process (process ${process.pid}, since <time>): two runs of one session would write into each other's conversation and kernel state.`,
	);
	expect((refused as { hint?: string }).hint).toBe(
		`Close that session before opening it again; or go on from a copy of it beside that run: \`prime-agent --fork ${id}\`.`,
	);
	await first.dispose();
	const again = await sessions.start({ resume: id });
	expect((await again.agentSession.prompt("again")).status).toBe("ok");
	expect(again.session.path).toBe(first.session.path);
});
