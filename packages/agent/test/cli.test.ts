import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import {
	anthropicMessagesServer,
	closedPort,
	openAiCompletionsServer,
} from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { parseArgs, runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { memoryIo } from "./cli-io.js";

let world: TempWorld;
afterEach(() => world?.cleanup());

/**
 * A server with no model list whose chat path wants `key` (401 without it) and answers an empty
 * request 400, as a gateway does.
 */
async function guardedServer(key: string): Promise<{ baseUrl: string; close(): Promise<void> }> {
	const server = createServer((req, res) => {
		req.resume();
		req.on("end", () => {
			if (req.method !== "POST" || req.url !== "/v1/chat/completions") res.writeHead(404).end();
			else if (req.headers.authorization !== `Bearer ${key}`) res.writeHead(401).end();
			else res.writeHead(400).end('{"error":{"message":"messages is required"}}');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

describe("command line", () => {
	it("parses the documented options", () => {
		expect(
			parseArgs(["-p", "fix it", "--model", "openai/gpt-5", "--mode", "json", "--resume", "abc", "--tools", "ipython"]),
		).toMatchObject({
			command: "run",
			print: "fix it",
			model: "openai/gpt-5",
			mode: "json",
			resume: "abc",
			tools: ["ipython"],
		});
		expect(parseArgs(["sessions", "--all"])).toMatchObject({ command: "sessions", all: true });
		expect(parseArgs(["--model=ollama/qwen:7b"]).model).toBe("ollama/qwen:7b");
	});

	it("takes -p's prompt after the options that follow it, as the one argument left", () => {
		expect(parseArgs(["-p", "--model", "faux/x", "fix it"])).toMatchObject({ print: "fix it", model: "faux/x" });
		expect(parseArgs(["-p", "--mode=json", "-"])).toMatchObject({ print: "-", mode: "json" });
		// A prompt that opens with a dash is still the prompt when written straight after -p.
		expect(parseArgs(["-p", "-", "--model", "faux/x"]).print).toBe("-");
		expect(parseArgs(["-p", "-v flag is broken, fix it", "--model", "faux/x"]).print).toBe("-v flag is broken, fix it");
		expect(parseArgs(["-p", "-5"]).print).toBe("-5");
		// `--` ends the options: what follows is the prompt, whatever it looks like.
		expect(parseArgs(["-p", "--", "-m is broken"]).print).toBe("-m is broken");
		expect(parseArgs(["--model", "faux/x", "-p", "--", "--help"])).toMatchObject({ print: "--help", command: "run" });
		expect(() => parseArgs(["-p", "--model", "faux/x"])).toThrow("-p needs a prompt.");
		expect(() => parseArgs(["-p", "--model", "faux/x", "fix", "it"])).toThrow('Unexpected argument "it".');
	});

	it("rejects an unknown option and an unquoted prompt with a way forward", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["--frobnicate"], io)).toBe(ExitCode.usage);
		expect(io.err()).toContain("Unknown option --frobnicate");
		const io2 = memoryIo(world.project, world.env);
		expect(await runCli(["fix", "the", "bug"], io2)).toBe(ExitCode.usage);
		expect(io2.err()).toContain('prime-agent -p "fix the bug"');
	});

	it("a stray argument after sessions or doctor says what that command takes, not how to quote a prompt", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["sessions", "abc", "def"], io)).toBe(ExitCode.usage);
		expect(io.err()).toContain('Unexpected argument "def" for `prime-agent sessions`');
		expect(io.err()).toContain("at most one session");
		const io2 = memoryIo(world.project, world.env);
		expect(await runCli(["doctor", "now"], io2)).toBe(ExitCode.usage);
		expect(io2.err()).toContain("`prime-agent doctor` takes no arguments");
		expect(io2.err()).not.toContain("Quote the prompt");
	});

	it("kernelspec install writes a Jupyter kernelspec of the kernel with the agent's runtime; a bad name or action is refused", async () => {
		world = makeTempWorld();
		const env = {
			...world.env,
			JUPYTER_DATA_DIR: join(world.home, "jupyter"),
			PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(),
		};
		const io = memoryIo(world.project, env);
		expect(await runCli(["kernelspec", "install", "--name", "pa-test"], io)).toBe(ExitCode.ok);
		const path = join(world.home, "jupyter", "kernels", "pa-test");
		expect(io.out()).toContain(`Installed the kernelspec "pa-test" in ${path}`);
		const spec = JSON.parse(readFileSync(join(path, "kernel.json"), "utf8"));
		expect(spec.argv.slice(1, 4)).toEqual([
			join(path, "python", "0", "prime_kernel_launch.py"),
			"-f",
			"{connection_file}",
		]);
		expect(spec.env.PYTHONPATH).toBe(`${join(path, "python", "0")}:${join(path, "python", "1")}`);
		expect(readdirSync(join(path, "python", "1"))).toEqual(["prime_agent_runtime"]);
		const io2 = memoryIo(world.project, env);
		expect(await runCli(["kernelspec", "install", "--name", ".."], io2)).toBe(ExitCode.kernel);
		expect(io2.err()).toContain('".." cannot name a kernelspec');
		expect(readdirSync(join(world.home, "jupyter", "kernels"))).toEqual(["pa-test"]);
		const io3 = memoryIo(world.project, env);
		expect(await runCli(["kernelspec", "remove"], io3)).toBe(ExitCode.usage);
		expect(io3.err()).toContain('`prime-agent kernelspec` takes install, not "remove".');
	});

	it.each(["read", "bash", "edit"])("a removed built-in tool (%s) fails and points to ipython", async (tool) => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--tools", `ipython,${tool}`], io)).toBe(ExitCode.usage);
		expect(io.err()).toContain(`"${tool}" no longer exists`);
		expect(io.err()).toContain("Python");
		expect(io.err()).toContain('"ipython"');
	});

	it("a missing API key names the environment variable and the auth file", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "anthropic/claude-sonnet-4-5"], io)).toBe(ExitCode.missingCredentials);
		expect(io.err()).toContain('No API key for provider "anthropic"');
		expect(io.err()).toContain("ANTHROPIC_API_KEY");
		expect(io.err()).toContain(`${world.home}/auth.json`);
	});

	it("with no model and no key anywhere, says how to pick one", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi"], io)).toBe(ExitCode.missingCredentials);
		expect(io.err()).toContain("--model provider/id");
	});

	it("an unknown model lists close candidates", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "anthropic/claude-sonet"], io)).toBe(ExitCode.usage);
		expect(io.err()).toContain('Unknown model "claude-sonet"');
		expect(io.err()).toContain("anthropic/claude-");
	});

	it("a key in auth.json is accepted, and a missing kernel says to run setup", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: "/nonexistent/python" });
		world.writeHome("auth.json", { openai: { type: "api_key", key: "sk-test" } });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "openai/gpt-5"], io)).toBe(ExitCode.kernel);
		expect(io.err()).toContain("prime-agent setup");
	});

	it("a broken models.json is reported by name and left alone", async () => {
		world = makeTempWorld();
		world.writeHome("models.json", { providers: { local: { models: [{ id: "m" }] } } });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.usage);
		expect(io.err()).toContain('provider "local" lists models but has no "baseUrl"');
	});

	it("json mode reports a start-up error as a JSON line too", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["--mode", "json", "-p", "hi", "--model", "openai/gpt-5"], io)).toBe(
			ExitCode.missingCredentials,
		);
		expect(JSON.parse(io.out().trim())).toMatchObject({ type: "error", exitCode: ExitCode.missingCredentials });
	});

	it("--at without a session to pick from is a usage error saying what to combine it with", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--at", "abcd1234"], io)).toBe(ExitCode.usage);
		expect(io.err()).toBe(
			"Error: --at needs a session to pick the entry from.\nCombine it with --resume <id>, --continue or --fork <id>; `prime-agent sessions <id>` lists entry ids.\n",
		);
	});

	it("--mode=json reports an error as a JSON line; a prompt that reads json does not", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["--mode=json", "-p", "hi", "--model", "openai/gpt-5"], io)).toBe(ExitCode.missingCredentials);
		expect(JSON.parse(io.out().trim())).toMatchObject({ type: "error", exitCode: ExitCode.missingCredentials });
		const text = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "json", "--model", "openai/gpt-5"], text)).toBe(ExitCode.missingCredentials);
		expect(text.out()).toBe("");
		expect(text.err()).toContain('No API key for provider "openai"');
	});

	it("a local slash command needs no provider key; an unknown one is an error naming the commands", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		const status = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "/pc status", "--model", "anthropic/claude-sonnet-4-5"], status)).toBe(ExitCode.ok);
		expect(status.out()).toContain("Prime Context status");
		const unknown = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "/nope now", "--model", "anthropic/claude-sonnet-4-5"], unknown)).toBe(ExitCode.usage);
		expect(unknown.err()).toContain(
			"Unknown command /nope. Commands: /compact, /goal, /harness, /mcp, /pc, /refine, /skill. To send text that starts with a slash to the model, begin it with two: //nope.",
		);
		// A command that needs the model says the key is missing.
		const compact = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "/compact", "--model", "anthropic/claude-sonnet-4-5"], compact)).toBe(
			ExitCode.missingCredentials,
		);
		expect(compact.err()).toContain('No API key for provider "anthropic"');
	});

	it("--tools names only tools there are: an unknown one lists them", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("auth.json", { openai: "sk-test" });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "openai/gpt-5", "--tools", "ipython,grepper"], io)).toBe(
			ExitCode.usage,
		);
		expect(io.err()).toContain(
			'Unknown tool: grepper.\nThe tools are "ipython", "prime_context"; name only those in --tools.',
		);
	});

	it("a run that ends before any answer leaves no session file and no empty folder", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", {
			providers: { local: { baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, models: [{ id: "m" }] } },
		});
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.modelError);
		expect(io.err()).toContain("Nothing was saved");
		expect(readdirSync(world.home)).toEqual(["models.json"]);
	});

	it("an agent home where sessions cannot be saved is refused before any model call, saying so", async () => {
		const server = await openAiCompletionsServer([{ text: "never asked" }]);
		try {
			world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
			world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "m" }] } } });
			world.writeHome("sessions", "a file where the sessions folder belongs");
			const io = memoryIo(world.project, world.env);
			expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.usage);
			expect(io.err()).toContain(
				`Sessions cannot be saved in the agent home ${world.home}: ${world.home}/sessions is not a folder.`,
			);
			expect(io.err()).toContain("Make it a writable folder, or point PRIME_AGENT_DIR at one.");
			expect(server.requests.length).toBe(0);
		} finally {
			await server.close();
		}
	});

	it("setup that cannot create the environment says what failed and what to do", async () => {
		world = makeTempWorld({ PRIME_AGENT_SETUP_PYTHON: "/nonexistent/python3" });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["setup"], io)).toBe(ExitCode.kernel);
		expect(io.err()).toContain("Cannot run /nonexistent/python3");
		expect(io.err()).toContain("prime-agent setup");
	});

	it("doctor says whether each local server in models.json answers as an API at its baseUrl, with its key", async () => {
		const server = await openAiCompletionsServer([]);
		const anthropic = await anthropicMessagesServer([]);
		const guarded = await guardedServer("sk-right");
		const down = `http://127.0.0.1:${await closedPort()}/v1`;
		// The OpenAI server's base without its /v1: up, but every model call would get a 404.
		const noV1 = server.baseUrl.replace(/\/v1$/, "");
		try {
			world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(), GUARD_KEY: "sk-wrong" });
			world.writeHome("models.json", {
				providers: {
					up: { baseUrl: server.baseUrl, models: [{ id: "a" }] },
					down: { baseUrl: down, models: [{ id: "b" }] },
					short: { baseUrl: noV1, models: [{ id: "c" }] },
					claude: { baseUrl: anthropic.baseUrl, api: "anthropic-messages", models: [{ id: "d" }] },
					keyless: { baseUrl: guarded.baseUrl, models: [{ id: "e" }] },
					wrongkey: { baseUrl: guarded.baseUrl, apiKeyEnv: "GUARD_KEY", models: [{ id: "f" }] },
					rightkey: { baseUrl: guarded.baseUrl, apiKey: "sk-right", models: [{ id: "g" }] },
					unsetkey: { baseUrl: guarded.baseUrl, apiKeyEnv: "PRIME_TEST_UNSET_KEY", models: [{ id: "h" }] },
				},
			});
			const io = memoryIo(world.project, world.env);
			expect(await runCli(["doctor"], io)).toBe(ExitCode.ok);
			const out = io.out();
			expect(out).toContain(`✓ Server "up": ${server.baseUrl} answers (HTTP 200)`);
			expect(out).toContain(`✓ Server "claude": ${anthropic.baseUrl} answers (HTTP 200)`);
			expect(out).toContain(`! Server "down": ${down} does not answer (ECONNREFUSED)`);
			expect(out).toContain('fix: Start the server, or fix "baseUrl" of "down"');
			expect(out).toContain(
				`! Server "short": ${noV1} answers, but neither the model list nor ${noV1}/chat/completions is there (HTTP 404): model calls to this baseUrl would fail`,
			);
			expect(out).toContain(`an OpenAI-compatible server's usually ends in /v1 (${noV1}/v1).`);
			// The guarded server has no model list: its API path answers the empty request.
			expect(out).toContain(`! Server "keyless": ${guarded.baseUrl} refuses calls without a key (HTTP 401)`);
			expect(out).toContain(`fix: Give "keyless" a key in ${join(world.home, "models.json")}: "apiKeyEnv"`);
			expect(out).toContain(`! Server "wrongkey": ${guarded.baseUrl} refuses the key from $GUARD_KEY (HTTP 401)`);
			expect(out).toContain(
				`✓ Server "rightkey": ${guarded.baseUrl} answers (HTTP 400 for an empty request; it has no model list)`,
			);
			expect(out).toContain(
				`! Server "unsetkey": ${guarded.baseUrl} refuses calls without a key (HTTP 401): models.json names $PRIME_TEST_UNSET_KEY, which is not set`,
			);
			expect(out).toContain("fix: Export PRIME_TEST_UNSET_KEY=<key> and run doctor again.");
			expect(out).toMatch(/All checks passed \(6 warnings marked ! above\)\.\n$/);
		} finally {
			await server.close();
			await anthropic.close();
			await guarded.close();
		}
	});

	it("prints help and version", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["--help"], io)).toBe(0);
		expect(io.out()).toContain("Not a sandbox");
		const io2 = memoryIo(world.project, world.env);
		expect(await runCli(["--version"], io2)).toBe(0);
		expect(io2.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
	});

	it("doctor checks the kernel for real and says how to fix a missing provider", async () => {
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["doctor"], io)).toBe(ExitCode.usage);
		expect(io.out()).toMatch(/✓ Kernel: Python 3\.\d+/);
		expect(io.out()).toContain("✗ Providers: no provider has a key");
		expect(io.out()).toContain("fix: Export a key");
	});
});
