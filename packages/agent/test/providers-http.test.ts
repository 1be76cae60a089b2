import { readFileSync } from "node:fs";
import { spawnCliText } from "prime-agent-test-support/cli-process";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import {
	anthropicModelWorld,
	closedPort,
	type LoopbackServer,
	openAiCompletionsServer,
} from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { EMPTY_ANSWER } from "../src/orchestrator/empty-answer.js";
import { memoryIo } from "./cli-io.js";

let python: string;
let world: TempWorld;
let server: LoopbackServer;
beforeAll(() => {
	python = kernelPythonForTests();
});
afterEach(async () => {
	await server?.close();
	world?.cleanup();
});

const SCRIPT = [{ code: "answer = 6 * 7\nprint(answer)" }, { text: "The answer is 42." }];

function jsonLines(text: string): Record<string, unknown>[] {
	return text
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line));
}

describe("real provider path through pi-ai", () => {
	it("--tools ipython sends the model that one tool only; --tools prime_context,ipython sends both", async () => {
		server = await openAiCompletionsServer([{ text: "one" }, { text: "two" }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
		world.writeHome("models.json", {
			providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
		});
		const toolsSent = (index: number) =>
			(server.requests[index]?.tools as { function: { name: string } }[] | undefined)?.map(
				(tool) => tool.function.name,
			);
		expect(
			await runCli(["-p", "hi", "--model", "local/coder", "--tools", "ipython"], memoryIo(world.project, world.env)),
		).toBe(0);
		expect(toolsSent(0)).toEqual(["ipython"]);
		const both = ["-p", "hi", "--model", "local/coder", "--tools", "prime_context,ipython"];
		expect(await runCli(both, memoryIo(world.project, world.env))).toBe(0);
		expect(toolsSent(1)).toEqual(["ipython", "prime_context"]);
	});

	it("an OpenAI-compatible local server in models.json drives a tool call and an answer", async () => {
		server = await openAiCompletionsServer(SCRIPT);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
		world.writeHome("models.json", {
			providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
		});
		const io = memoryIo(world.project, world.env);
		const code = await runCli(["--mode", "json", "-p", "what is 6 times 7?", "--model", "local/coder"], io);
		expect(io.err()).toBe("");
		expect(code).toBe(0);

		const events = jsonLines(io.out());
		expect(events[0]).toMatchObject({ type: "session", model: "local/coder" });
		expect(events.at(-1)).toMatchObject({ type: "result", status: "ok", exitCode: 0 });
		const toolEnd = events.find((event) => event.type === "tool_execution_end") as {
			result: { content: { text: string }[] };
		};
		expect(toolEnd.result.content[0]?.text).toContain("42");
		expect(events.some((event) => event.type === "kernel_status" && event.phase === "ready")).toBe(true);

		// What went over the wire: one function tool, then the cell's output as a tool message.
		expect(server.requests).toHaveLength(2);
		const tools = server.requests[0]?.tools as { function: { name: string; parameters: { properties: object } } }[];
		expect(tools.map((tool) => tool.function.name)).toEqual(["ipython", "prime_context"]);
		expect(Object.keys(tools[0]?.function.parameters.properties ?? {})).toEqual(["code"]);
		const messages = server.requests[1]?.messages as { role: string; content: unknown }[];
		expect(messages.at(-1)).toMatchObject({ role: "tool" });
		expect(JSON.stringify(messages.at(-1)?.content)).toContain("42");

		const session = events[0] as { path: string };
		const saved = readFileSync(session.path, "utf8").trim().split("\n");
		expect(saved.map((line) => JSON.parse(line).type)).toContain("message");
	});

	it("an Anthropic-messages server as a custom base URL drives a tool call and an answer, with the key from the environment", async () => {
		({ world, server } = await anthropicModelWorld(SCRIPT));
		const io = memoryIo(world.project, world.env);
		const code = await runCli(["-p", "what is 6 times 7?", "--model", "proxy/claude-loopback"], io);
		expect(code).toBe(0);
		expect(io.out()).toBe("The answer is 42.\n");
		expect(io.err()).toContain("▸ ipython: answer = 6 * 7 (+1 lines)");
		expect(server.headers[0]?.["x-api-key"]).toBe("sk-loopback");
		const tools = server.requests[0]?.tools as { name: string }[];
		expect(tools.map((tool) => tool.name)).toEqual(["ipython", "prime_context"]);
		const last = (
			server.requests[1]?.messages as { role: string; content: { type: string; content: unknown }[] }[] | undefined
		)?.at(-1);
		expect(last?.role).toBe("user");
		expect(last?.content[0]?.type).toBe("tool_result");
		expect(JSON.stringify(last?.content[0]?.content)).toContain("42");
	});

	it("-p - reads the request from stdin", async () => {
		server = await openAiCompletionsServer([{ text: "Read it." }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		const io = memoryIo(world.project, world.env, "summarise the piped request\n");
		expect(await runCli(["-p", "-", "--model", "local/coder"], io)).toBe(0);
		expect(io.out()).toBe("Read it.\n");
		expect(JSON.stringify(server.requests[0]?.messages)).toContain("summarise the piped request");
	});

	it("a context overflow says the conversation no longer fits and how to go on", async () => {
		server = await openAiCompletionsServer([
			{
				status: 400,
				error: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
			},
		]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
		world.writeHome("models.json", {
			providers: { local: { baseUrl: server.baseUrl, models: [{ id: "small", contextWindow: 8192 }] } },
		});
		const io = memoryIo(world.project, world.env);
		const code = await runCli(["-p", "hello", "--model", "local/small"], io);
		expect(code).toBe(1);
		expect(io.err()).toContain("no longer fits the context window of local/small (8,192 tokens)");
		expect(io.err()).toContain("--fork");
	});

	it("a server that answers with nothing exits 1 saying so, not 0 with an empty answer", async () => {
		for (const body of ["this is not SSE at all", "data: [DONE]\n\n"]) {
			server = await openAiCompletionsServer([{ body }]);
			world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
			world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
			const io = memoryIo(world.project, world.env);
			expect(await runCli(["-p", "hello", "--model", "local/coder"], io)).toBe(ExitCode.modelError);
			expect(io.err()).toContain(`The model local/coder at ${server.baseUrl} failed: ${EMPTY_ANSWER}.`);
			expect(io.out()).toBe("");
			await server.close();
			world.cleanup();
		}
	});

	it("a reply that is not JSON says so, without the library's own debug lines", async () => {
		server = await openAiCompletionsServer([{ body: "data: {not json\n\ndata: [DONE]\n\n" }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
		world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "coder" }] } } });
		// The real program: the OpenAI SDK prints to the process's own console.
		const cli = spawnCliText(["-p", "hello", "--model", "local/coder"], world.project, world.env);
		expect(await cli.exitCode()).toBe(ExitCode.modelError);
		expect(cli.stderr()).toBe(
			`The model local/coder at ${server.baseUrl} failed: its reply is not valid JSON (Expected property name or '}' in JSON at position 1), so "baseUrl" may not be the server's API. Check the model id, your key or quota, and the network (\`prime-agent doctor\` helps), then retry. Nothing was saved (no answer had arrived yet): run the request again.\n`,
		);
	});

	it("a model error exits 1 with what happened and how to resume", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: python });
		// Nothing listens on this port: the connection is refused.
		const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
		world.writeHome("models.json", { providers: { dead: { baseUrl, models: [{ id: "m" }] } } });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hello", "--model", "dead/m"], io)).toBe(1);
		expect(io.err()).toContain(`The model dead/m at ${baseUrl} failed:`);
		expect(io.err()).not.toContain("..");
		expect(io.err()).toContain("prime-agent doctor");
		expect(io.err()).toContain("Nothing was saved");
	});
});
