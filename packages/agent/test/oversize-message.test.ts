import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { type DaemonWorld, makeDaemonWorld } from "prime-agent-test-support/daemon-world";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { runUiInWorker, type WorkerLink } from "../src/daemon/index.js";
import { ExitCode } from "../src/errors.js";
import { localLink } from "../src/link/index.js";
import type { InteractiveUi } from "../src/modes/index.js";
import { memoryIo } from "./cli-io.js";

/** The model's window: small, so a few hundred KB of text is many times too large. */
const WINDOW = 8_000;
/** 400,000 characters: about 100,000 tokens at the estimate's 4 characters a token. */
const LARGE = "All work and no play makes Jack a dull boy. ".repeat(10_000).slice(0, 400_000);

const sessions = useFauxSessions({ models: [{ id: "small", contextWindow: WINDOW }] });

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
let daemonWorld: DaemonWorld | undefined;
afterEach(async () => {
	await daemonWorld?.teardown();
	daemonWorld = undefined;
	await server?.close();
	world?.cleanup();
	server = undefined;
	world = undefined;
});

async function smallWindowWorld(): Promise<{ world: TempWorld; server: LoopbackServer }> {
	server = await openAiCompletionsServer([{ text: "first answer" }, { text: "second answer" }]);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	world.writeHome("models.json", {
		providers: { local: { baseUrl: server.baseUrl, models: [{ id: "small", contextWindow: WINDOW }] } },
	});
	return { world, server };
}

const LARGE_TEXT_HINT =
	"Put the large text in a file and ask the agent to read it with Python (for example: summarise notes.txt), so only what it prints enters the conversation.";

describe("a user message larger than the model's context window", () => {
	it("a -p prompt read from stdin is refused before it is sent or saved, with its size, the window and what to do", async () => {
		const { world, server } = await smallWindowWorld();
		const io = memoryIo(world.project, world.env, LARGE);
		expect(await runCli(["-p", "-", "--model", "local/small"], io)).toBe(ExitCode.usage);
		expect(io.err()).toBe(
			"Error: The message is about 100,000 tokens (400,000 characters), more than the whole context window of local/small (8,000 tokens). It was not sent.\n" +
				`${LARGE_TEXT_HINT}\n`,
		);
		expect(server.requests.length).toBe(0);
		// Nothing of it was written: no session file holds it.
		expect(readdirSync(world.home).includes("sessions") ? readdirSync(join(world.home, "sessions")) : []).toEqual([]);
	});

	it("a message just inside the window is sent (compaction may run first; the message is not refused)", async () => {
		const { world, server } = await smallWindowWorld();
		const message = "x".repeat(WINDOW * 4 - 100);
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", message, "--model", "local/small"], io)).toBe(ExitCode.ok);
		expect(io.err()).not.toContain("It was not sent");
		expect(server.requests.some((request) => JSON.stringify(request).includes(message))).toBe(true);
	});

	it("a session file holding such an entry is not sent on resume: the error names the entry and how to continue before it", async () => {
		const { world, server } = await smallWindowWorld();
		const first = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "remember this", "--model", "local/small"], first)).toBe(ExitCode.ok);
		expect(server.requests.length).toBe(1);
		const sessions = join(world.home, "sessions");
		const file = join(sessions, readdirSync(sessions).find((name) => name.endsWith(".jsonl")) as string);
		const id = (JSON.parse(readFileSync(file, "utf8").split("\n")[0] as string) as { id: string }).id;
		// The user entry edited by hand to hold 400,000 characters.
		const lines = readFileSync(file, "utf8").trimEnd().split("\n");
		const userIndex = lines.findIndex((line) => line.includes('"remember this"'));
		const userEntry = JSON.parse(lines[userIndex] as string) as { id: string; parentId: string };
		lines[userIndex] = (lines[userIndex] as string).replace('"remember this"', JSON.stringify(LARGE));
		writeFileSync(file, `${lines.join("\n")}\n`);
		const sizeBefore = readFileSync(file, "utf8").length;

		const resumed = memoryIo(world.project, world.env);
		expect(await runCli(["--resume", id, "-p", "go on", "--model", "local/small"], resumed)).toBe(ExitCode.usage);
		expect(resumed.err()).toBe(
			`Error: Session ${id} holds a user message (entry ${userEntry.id}) of about 100,000 tokens, more than the whole context window of local/small (8,000 tokens), so no request holding it can be sent; nothing was sent.\n` +
				`Continue from the entry before it: \`prime-agent --resume ${id} --at ${userEntry.parentId}\` (the message stays in the file, on a branch left behind; \`prime-agent sessions ${id}\` lists the entries). ${LARGE_TEXT_HINT}\n`,
		);
		expect(server.requests.length).toBe(1);
		expect(readFileSync(file, "utf8").length).toBe(sizeBefore);

		// The way the error gives: the next request holds the new prompt, not the large entry.
		const before = memoryIo(world.project, world.env);
		const at = ["--resume", id, "--at", userEntry.parentId, "-p", "go on", "--model", "local/small"];
		expect(await runCli(at, before)).toBe(ExitCode.ok);
		expect(before.out()).toBe("second answer\n");
		expect(server.requests.length).toBe(2);
		const sent = JSON.stringify(server.requests[1]);
		expect(sent).toContain("go on");
		expect(sent).not.toContain("All work and no play");
	});

	it("in the line chat, it is refused and the chat goes on with the next line", async () => {
		const { world, server } = await smallWindowWorld();
		const io = memoryIo(world.project, world.env, `${LARGE}\nhello\n`);
		expect(await runCli(["--model", "local/small"], io)).toBe(ExitCode.ok);
		expect(io.err()).toContain(
			`The message is about 100,000 tokens (400,000 characters), more than the whole context window of local/small (8,000 tokens). It was not sent.\n${LARGE_TEXT_HINT}\n`,
		);
		expect(io.out()).toContain("first answer");
		expect(server.requests.length).toBe(1);
		expect(JSON.stringify(server.requests[0])).not.toContain("All work and no play");
	});

	it("steered into a running turn, it is refused the same way and the turn goes on without it", async () => {
		const flag = join(sessions.world.project, "go");
		const seen: Context[] = [];
		sessions.faux.setResponses([
			fauxAssistantMessage(
				fauxToolCall("ipython", {
					code: `import os, time\nwhile not os.path.exists(${JSON.stringify(flag)}): time.sleep(0.05)\nprint("flag seen")`,
				}),
			),
			(context) => {
				seen.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage("finished");
			},
		]);
		const started = await sessions.start();
		const link = localLink(started);
		const inCell = new Promise<void>((resolve) =>
			started.agentSession.subscribe((event) => {
				if (event.type === "tool_execution_start") resolve();
			}),
		);
		const run = started.agentSession.prompt("wait for the flag");
		await inCell;
		await expect(link.steer(LARGE)).rejects.toThrow(
			`The message is about 100,000 tokens (400,000 characters), more than the whole context window of ${sessions.modelRef("small")} (8,000 tokens). It was not sent.`,
		);
		writeFileSync(flag, "");
		expect((await run).status).toBe("ok");
		expect(seen.length).toBe(1);
		expect(JSON.stringify(seen)).toContain("flag seen");
		expect(JSON.stringify(seen)).not.toContain("All work and no play");
		expect(readFileSync(started.session.path, "utf8")).not.toContain("All work and no play");
	});

	it("steered into a background worker's running turn, the view is told and the turn goes on without it", async () => {
		daemonWorld = await makeDaemonWorld([]);
		const { project } = daemonWorld;
		// The same server, now with a small window and a cell that waits for a file.
		const started = join(project, "started");
		const go = join(project, "go");
		const wait = `import os, time\nopen(${JSON.stringify(started)}, "w").close()\nwhile not os.path.exists(${JSON.stringify(go)}): time.sleep(0.05)\nprint("flag seen")`;
		await daemonWorld.server.close();
		server = await openAiCompletionsServer([{ code: wait }, { text: "finished" }]);
		daemonWorld.writeHome("models.json", {
			providers: { local: { baseUrl: server.baseUrl, models: [{ id: "small", contextWindow: WINDOW }] } },
		});
		let refusal = "";
		let end: unknown;
		const ui: InteractiveUi = {
			async runInteractiveMode({ link }) {
				const run = link.prompt("wait for the flag");
				while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 25));
				refusal = await link.steer(LARGE).then(
					() => "delivered",
					(error: Error) => error.message,
				);
				writeFileSync(go, "");
				end = await run;
				// A view over a worker: leaving releases the worker, as the terminal UI does.
				await (link as WorkerLink).release();
				return ExitCode.ok;
			},
		};
		const io = memoryIo(project, daemonWorld.env);
		expect(await runUiInWorker({ cwd: project, model: "local/small" }, ui, io)).toBe(ExitCode.ok);
		expect(refusal).toContain(
			"The message is about 100,000 tokens (400,000 characters), more than the whole context window of local/small (8,000 tokens). It was not sent.",
		);
		expect(end).toEqual({
			status: "ok",
			exitCode: 0,
			result: expect.objectContaining({ type: "result", status: "ok", exitCode: 0, sessionPersisted: true }),
		});
		expect(server.requests.length).toBe(2);
		expect(JSON.stringify(server.requests[1])).toContain("flag seen");
		expect(JSON.stringify(server.requests)).not.toContain("All work and no play");
	}, 180_000);
});
