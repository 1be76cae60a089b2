import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { afterEach, describe, expect, it } from "vitest";
import { checkMcpServers, loadMcpConfig, moduleName } from "../src/mcp/index.js";
import { alive, cell as cellTurn } from "./agent-scripts.js";
import { FIXTURE, startHttpFixture } from "./mcp-fixture.js";

const STUBBORN = fileURLToPath(new URL("./fixtures/mcp-stubborn-server.mjs", import.meta.url));
const sessions = useFauxSessions();
const servers: ChildProcess[] = [];
/** Pids a test saw, killed after it whatever it asserted. */
const stray: number[] = [];
afterEach(() => {
	for (const server of servers.splice(0)) server.kill("SIGKILL");
	for (const pid of stray.splice(0)) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// Gone, as it should be.
		}
	}
});

/** The fixture as the stdio server "fixture" in the agent home's mcp.json (plus `extra` fields). */
function configureStdio(extra: Record<string, unknown> = {}, name = "fixture"): string {
	const starts = join(sessions.world.home, "starts.log");
	sessions.world.writeHome("mcp.json", {
		mcpServers: {
			[name]: {
				command: process.execPath,
				args: [FIXTURE],
				// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
				env: { MCP_FIXTURE_STARTS: starts, FIXTURE_SECRET: "${SECRET_FROM_ENV}" },
				...extra,
			},
		},
	});
	sessions.world.env.SECRET_FROM_ENV = "s3cret";
	return starts;
}

async function cell(started: Awaited<ReturnType<typeof sessions.start>>, code: string) {
	const run = await started.kernel.run(code);
	return run.cell;
}

describe("MCP servers as kernel modules (stdio)", () => {
	it("lists tools with their schemas, calls one with arguments and returns structured content as Python objects", async () => {
		const starts = configureStdio();
		const started = await sessions.start();
		// Nothing starts before first use.
		const before = await cell(started, "import mcp_servers.fixture as fx\nprint(type(fx).__name__)");
		expect(before.stdout).toBe("McpServerModule\n");
		expect(() => readFileSync(starts, "utf8")).toThrow();
		const listed = await cell(
			started,
			"tools = fx.tools()\nprint(sorted(t['python_name'] for t in tools))\nprint([t['input_schema']['required'] for t in tools if t['name'] == 'add'][0])",
		);
		expect(listed.stdout).toBe("['add', 'crash', 'echo', 'fail', 'get_env', 'lines', 'pid', 'slow']\n['a', 'b']\n");
		const added = await cell(started, "r = await fx.add(a=2, b=3.5)\nprint(type(r).__name__, r)");
		expect(added.stdout).toBe("dict {'sum': 5.5, 'inputs': [2, 3.5]}\n");
		const echoed = await cell(started, "print(repr(await mcp.fixture.echo(text='hi there')))");
		expect(echoed.stdout).toBe("'hi there'\n");
		// A tool name with a dash is reached by its Python name; ${VAR} in the config came from the session's env.
		const env = await cell(started, "print(await fx.get_env(name='FIXTURE_SECRET'))");
		expect(env.stdout).toBe("s3cret\n");
		expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1);
	});

	it("help() shows each tool's description, signature and input schema", async () => {
		configureStdio();
		const started = await sessions.start();
		const run = await cell(
			started,
			"import mcp_servers.fixture as fx, pydoc\ntext = pydoc.render_doc(fx, renderer=pydoc.plaintext)\nprint('8 tools' in text, 'add(*, a, b)' in text, '\"required\"' in text, 'Echo the text back.' in text)\nprint(fx.add.__doc__.splitlines()[0])",
		);
		expect(run.status).toBe("ok");
		expect(run.stdout).toBe("True True True True\nAdd two numbers.\n");
		// Positional arguments have no names to send: the error says how to call it.
		const positional = await cell(started, "await fx.add(2, 3)");
		expect(positional.error?.ename).toBe("TypeError");
		expect(positional.error?.evalue).toBe(
			"mcp_servers.fixture.add takes keyword arguments only, named as in its input schema: add(a=..., b=...)",
		);
		const unlisted = await cell(started, "await fx.no_such_tool('x')");
		expect(unlisted.error?.evalue).toBe(
			"mcp_servers.fixture.no_such_tool takes keyword arguments only, named as in its input schema (help() shows them)",
		);
	});

	it("raises McpToolError with the server's message for bad arguments, an unknown tool and a failing tool", async () => {
		configureStdio();
		const started = await sessions.start();
		const schema = await cell(started, "import mcp_servers.fixture as fx\nawait fx.add(a='two', b=3)");
		expect(schema.error?.ename).toBe("McpToolError");
		expect(schema.error?.evalue).toContain('MCP server "fixture" tool "add": MCP error -32602: Input validation error');
		expect(schema.error?.evalue).toContain("expected number");
		const unknown = await cell(started, "await fx.no_such_tool(x=1)");
		expect(unknown.error?.ename).toBe("McpToolError");
		expect(unknown.error?.evalue).toBe(
			'MCP server "fixture" tool "no_such_tool": MCP error -32602: Tool no_such_tool not found (its tools: add, crash, echo, fail, get_env, lines, pid, slow)',
		);
		const failed = await cell(started, "await fx.fail()");
		expect(failed.error?.ename).toBe("McpToolError");
		expect(failed.error?.evalue).toBe('MCP server "fixture" tool "fail": the fixture tool failed on purpose');
		// The server is still the same process after tool errors.
		const ok = await cell(started, "print(await fx.echo(text='still up'))");
		expect(ok.stdout).toBe("still up\n");
	});

	it("restarts a crashed server once on the next call; a second crash leaves it down until it is restarted", async () => {
		const starts = configureStdio();
		const started = await sessions.start();
		const first = await cell(started, "import mcp_servers.fixture as fx\npid1 = int(await fx.pid())\nawait fx.crash()");
		expect(first.error?.ename).toBe("McpServerDown");
		expect(first.error?.evalue).toContain('MCP server "fixture" stopped during the call to "crash"');
		expect(first.error?.evalue).toContain("fixture: crashing on purpose");
		expect(first.error?.evalue).toContain("it is started again on the next call");
		const second = await cell(started, "pid2 = int(await fx.pid())\nprint(pid1 != pid2)");
		expect(second.stdout).toBe("True\n");
		const pid1 = Number((await cell(started, "print(pid1)")).stdout.trim());
		expect(alive(pid1)).toBe(false);
		expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(2);
		await cell(started, "await fx.crash()");
		const down = await cell(started, "await fx.echo(text='x')");
		expect(down.error?.ename).toBe("McpServerDown");
		expect(down.error?.evalue).toContain('MCP server "fixture" is down: it exited');
		expect(down.error?.evalue).toBe(
			'MCP server "fixture" is down: it exited; its stderr ended with: fixture: crashing on purpose. Fix it, then restart it: `await mcp.restart("fixture")` in a cell, or `/mcp restart fixture`.',
		);
		expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(2);
		const listing = await started.agentSession.prompt("/mcp");
		expect(listing.command?.message).toContain("fixture  stdio");
		expect(listing.command?.message).toContain("  down: it exited");
		const restarted = await started.agentSession.prompt("/mcp restart fixture");
		expect(restarted.command?.message).toBe('MCP server "fixture" restarted: ready (8 tools).');
		expect((await cell(started, "print(await fx.echo(text='back'))")).stdout).toBe("back\n");
	});

	it("times a slow call out with McpTimeout and the server stays usable", async () => {
		configureStdio({ timeout: 300 });
		const started = await sessions.start();
		const slow = await cell(started, "import mcp_servers.fixture as fx\nawait fx.slow(ms=5000)");
		expect(slow.error?.ename).toBe("McpTimeout");
		expect(slow.error?.evalue).toContain(
			'MCP server "fixture" tool "slow" did not answer within 0.3 s; the call was cancelled.',
		);
		const isTimeout = await cell(
			started,
			"from prime_agent_runtime.mcp_servers import McpTimeout\nprint(issubclass(McpTimeout, TimeoutError))",
		);
		expect(isTimeout.stdout).toBe("True\n");
		const override = await cell(started, "print(await fx.call('slow', {'ms': 50}, timeout=5))");
		expect(override.stdout).toBe("waited 50 ms\n");
		const tooLong = await cell(started, "await fx.call('slow', {'ms': 1}, timeout=601)");
		expect(tooLong.error?.ename).toBe("McpToolError");
		expect(tooLong.error?.evalue).toBe("timeout= is at most 600 s (the kernel waits no longer for the host)");
	});

	it("concurrent first calls start the server once and each gets its own answer", async () => {
		const starts = configureStdio();
		const started = await sessions.start();
		const run = await cell(
			started,
			"import mcp_servers.fixture as fx\nprint(await asyncio.gather(fx.slow(ms=300), fx.echo(text='a'), fx.add(a=1, b=2), fx.echo(text='b')))",
		);
		expect(run.stdout).toBe("['waited 300 ms', 'a', {'sum': 3, 'inputs': [1, 2]}, 'b']\n");
		expect(readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1);
	});

	it("a large result printed from a cell reaches the model as a Prime Context capsule, like any output", async () => {
		configureStdio();
		const contexts: Context[] = [];
		const prompts: string[] = [];
		sessions.faux.setResponses([
			(context) => {
				prompts.push(context.systemPrompt ?? "");
				return cellTurn("big = await mcp.fixture.lines(count=20000)\nprint(big)");
			},
			(context) => {
				prompts.push(context.systemPrompt ?? "");
				contexts.push(context);
				return fauxAssistantMessage("seen");
			},
			(context) => {
				prompts.push(context.systemPrompt ?? "");
				return fauxAssistantMessage("again");
			},
		]);
		const started = await sessions.start();
		await started.agentSession.prompt("print the lines");
		await started.agentSession.prompt("and again");
		// Before and after the server started, and on the next prompt: the same system prompt, byte for byte.
		expect(prompts).toHaveLength(3);
		expect(new Set(prompts).size).toBe(1);
		const result = contexts[0]?.messages.at(-1);
		const text = result?.role === "toolResult" ? (result.content[0] as { text: string }).text : "";
		expect(text.startsWith('<prime_context_output id="obs_000001" tool="ipython"')).toBe(true);
		expect(text).toContain('lines="20000"');
		expect(text.length).toBeLessThan(10_000);
		// The model is told the module names, never given MCP tools.
		expect(contexts[0]?.systemPrompt).toContain(
			"These MCP servers are Python modules in the kernel (not tools): mcp_servers.fixture.",
		);
		expect(contexts[0]?.tools?.map((tool) => tool.name)).toEqual(["ipython", "prime_context"]);
	});

	it("stops every started server with the session", async () => {
		configureStdio();
		const started = await sessions.start();
		const pid = Number((await cell(started, "import mcp_servers.fixture as fx\nprint(await fx.pid())")).stdout.trim());
		expect(alive(pid)).toBe(true);
		await started.dispose();
		expect(alive(pid)).toBe(false);
	});

	it("stops a server that ignores its closed stdin with the session, and the server's own subprocess", async () => {
		const pids = join(sessions.world.home, "stubborn.json");
		sessions.world.writeHome("mcp.json", {
			mcpServers: { stubborn: { command: process.execPath, args: [STUBBORN], env: { MCP_FIXTURE_PIDS: pids } } },
		});
		const started = await sessions.start();
		await cell(started, "import mcp_servers.stubborn as s\nprint(await s.pid())");
		const { server, subprocess } = JSON.parse(readFileSync(pids, "utf8")) as { server: number; subprocess: number };
		stray.push(server, subprocess);
		expect([alive(server), alive(subprocess)]).toEqual([true, true]);
		await started.dispose();
		// Told to stop (stdin closed, then SIGTERM to its process group): the subprocess goes too.
		for (let waited = 0; (alive(server) || alive(subprocess)) && waited < 30_000; waited += 50)
			await new Promise((resolve) => setTimeout(resolve, 50));
		expect([alive(server), alive(subprocess)]).toEqual([false, false]);
	});

	it("an unknown server fails the import with the configured names", async () => {
		configureStdio();
		const started = await sessions.start();
		// Shown bare in a cell, a module is its repr (IPython's display probes do not become calls).
		const shown = await cell(started, "import mcp_servers.fixture as fx\nfx");
		expect(shown.result).toBe("<MCP server 'fixture' (stdio): help() or .tools() lists its tools>");
		const run = await cell(started, "import mcp_servers.nope");
		expect(run.error?.ename).toBe("ModuleNotFoundError");
		expect(run.error?.evalue).toBe(
			`no MCP server named 'nope' (configured: fixture); servers are configured in ${join(sessions.world.home, "mcp.json")} or ${join(sessions.world.project, ".prime", "mcp.json")}`,
		);
	});
});

describe("/mcp", () => {
	it("says where to configure servers when there are none", async () => {
		const started = await sessions.start();
		const none = await started.agentSession.prompt("/mcp");
		expect(none.command?.message).toBe(
			`No MCP servers configured. Add them to ${join(sessions.world.home, "mcp.json")} or ${join(sessions.world.project, ".prime", "mcp.json")} as {"mcpServers": {"name": {"command": "...", "args": []}}} and start a new session.`,
		);
		const repr = await started.kernel.run("mcp");
		expect(repr.cell.result).toBe(
			`<mcp: no MCP servers configured (add them to ${join(sessions.world.home, "mcp.json")} or ${join(sessions.world.project, ".prime", "mcp.json")})>`,
		);
	});

	it("lists a server's tools with the first line of each description; a wrong subcommand shows the usage", async () => {
		configureStdio();
		const started = await sessions.start();
		const tools = await started.agentSession.prompt("/mcp tools fixture");
		expect(tools.command?.message?.split("\n").slice(0, 2)).toEqual([
			"echo: Echo the text back.",
			"add: Add two numbers.",
		]);
		const wrong = await started.agentSession.prompt("/mcp frob");
		expect(wrong.status).toBe("error");
		expect(wrong.command?.message).toBe(
			'The command /mcp failed: unknown /mcp command "frob". Usage: /mcp (list servers), /mcp tools <name>, /mcp restart <name>',
		);
	});
});

describe("MCP servers over streamable HTTP", () => {
	it("calls a loopback server with the configured headers; a wrong token is a clear server-down error", async () => {
		const { url, output } = await startHttpFixture(servers);
		sessions.world.writeHome("mcp.json", {
			// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
			mcpServers: { remote: { url, headers: { Authorization: "Bearer ${REMOTE_TOKEN}" } } },
		});
		sessions.world.env.REMOTE_TOKEN = "fixture-token";
		const started = await sessions.start();
		const run = await cell(
			started,
			"r = await mcp.remote.add(a=1, b=2)\nprint(r['sum'], await mcp.remote.echo(text='over http'))",
		);
		expect(run.stdout).toBe("3 over http\n");
		await started.dispose();
		// Stopping with the session ends the HTTP session at the server (DELETE).
		await output.waitFor(/closed [0-9a-f-]{36}/);
		sessions.world.env.REMOTE_TOKEN = "wrong";
		const refused = await sessions.start();
		const failed = await cell(refused, "await mcp.remote.echo(text='x')");
		expect(failed.error?.ename).toBe("McpServerDown");
		expect(failed.error?.evalue).toContain('MCP server "remote" is down: it did not start');
		expect(failed.error?.evalue).toContain("Error POSTing to endpoint: missing the fixture token");
	});
});

describe("MCP config", () => {
	// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
	it("an unset ${VAR}, an SSE type, a non-boolean disabled and a stdio type with a URL each turn their entry off; a keyword server's module has a trailing _", () => {
		const file = join(sessions.world.home, "mcp.json");
		sessions.world.writeHome("mcp.json", {
			mcpServers: {
				// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
				three: { command: "x", env: { TOKEN: "${NOT_SET}" } },
				old: { type: "sse", url: "http://127.0.0.1:1/sse" },
				a: { command: "x", disabled: "yes" },
				b: { type: "stdio", url: "http://127.0.0.1:1/mcp" },
				import: { command: "x" },
				class: { command: "y" },
			},
		});
		const config = loadMcpConfig({ agentHome: sessions.world.home, cwd: sessions.world.project, env: {} });
		expect(config.servers.map((server) => server.module)).toEqual(["class_", "import_"]);
		expect(config.off.map((entry) => [entry.name, entry.reason])).toEqual([
			[
				"a",
				`MCP config ${file}: "mcpServers.a.disabled" must be true or false. MCP server "a" is off; the other servers run. Write "disabled": true to turn it off.`,
			],
			[
				"b",
				`MCP config ${file}: "mcpServers.b.url" is not a field of a stdio server. MCP server "b" is off; the other servers run. Its fields: type, command, args, env, cwd, timeout, disabled.`,
			],
			[
				"old",
				`MCP config ${file}: "mcpServers.old.type" is "sse", the older HTTP+SSE transport, which is not supported. MCP server "old" is off; the other servers run. Point "url" at the server's streamable HTTP endpoint and write "type": "http" (or leave "type" out).`,
			],
			[
				"three",
				`MCP config ${file}: "mcpServers.three.env.TOKEN" uses \${NOT_SET}, which is not set. MCP server "three" is off; the other servers run. Export NOT_SET before starting the agent, write \${NOT_SET:-default}, or write the value in the file.`,
			],
		]);
		expect(moduleName("from")).toBe("from_");
		expect(moduleName("9lives")).toBe("_9lives");
	});

	it("doctor names each broken entry with the field and the fix, and still checks the others", async () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: { a: { command: "x", args: "y" }, fixture: { command: process.execPath, args: [FIXTURE] } },
		});
		const checks = await checkMcpServers({
			agentHome: sessions.world.home,
			cwd: sessions.world.project,
			env: sessions.world.env,
		});
		expect(checks.map((check) => [check.name, check.status])).toEqual([
			["MCP config", "fail"],
			['MCP server "fixture"', "ok"],
		]);
		expect(checks[0]?.detail).toBe(
			`${join(sessions.world.home, "mcp.json")}: "mcpServers.a.args" must be a list of strings. MCP server "a" is off; the other servers run. Write each server as {"command": "npx", "args": ["-y", "some-server"], "env": {}} or {"url": "https://host/mcp", "headers": {}}.`,
		);
	});

	it("doctor starts each configured server and reports its tools, and a server that cannot start", async () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: {
				fixture: { command: process.execPath, args: [FIXTURE] },
				missing: { command: join(sessions.world.home, "no-such-program") },
			},
		});
		const checks = await checkMcpServers({
			agentHome: sessions.world.home,
			cwd: sessions.world.project,
			env: sessions.world.env,
		});
		expect(checks.map((check) => [check.name, check.status])).toEqual([
			['MCP server "fixture"', "ok"],
			['MCP server "missing"', "warn"],
		]);
		expect(checks[0]?.detail).toMatch(/^8 tools, ready in \d+\.\ds \(mcp_servers\.fixture\)$/);
		expect(checks[1]?.detail).toContain('MCP server "missing" is down: it did not start (');
		expect(checks[1]?.detail).toContain("ENOENT");
	});
});
