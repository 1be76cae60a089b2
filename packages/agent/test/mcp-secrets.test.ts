// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the MCP config's own syntax.

import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { UserError } from "../src/errors.js";
import { loadMcpConfig } from "../src/mcp/index.js";
import { loadAuthFile } from "../src/providers/index.js";
import { cell, lastToolResult, scriptAgents } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";
import { FIXTURE, startHttpFixture } from "./mcp-fixture.js";

const sessions = useFauxSessions({ provider: "fauxmcp" });
const servers: ChildProcess[] = [];
afterEach(() => {
	for (const server of servers.splice(0)) server.kill("SIGKILL");
});

const SECRET = "qk-7f3a9c-SECRET-e21b";
/** A server that fails at once, writing its first argument to stderr. */
const ECHO_ARG = "console.error('refused', process.argv[1]); process.exit(2)";

/** Every file under `dir` whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
	const found: string[] = [];
	for (const name of readdirSync(dir)) {
		const path = join(dir, name);
		const stat = statSync(path);
		if (stat.isDirectory()) found.push(...filesHolding(path, needle));
		else if (stat.isFile() && readFileSync(path).includes(needle)) found.push(path);
	}
	return found;
}

describe("MCP servers never show an expanded ${VAR}", () => {
	it("help(), mcp.servers(), /mcp, failures and every file of the session show ${QKEY}, never its value", async () => {
		const { url } = await startHttpFixture(servers);
		const world = sessions.newWorld({ QKEY: SECRET, REMOTE_TOKEN: "fixture-token" });
		world.writeHome("mcp.json", {
			mcpServers: {
				local: { command: process.execPath, args: [FIXTURE, "--token=${QKEY}", "--or=${QKEY:-none}"] },
				remote: { url: `${url}?key=\${QKEY}`, headers: { Authorization: "Bearer ${REMOTE_TOKEN}" } },
				// Fails to start, echoing its argument on stderr: the failure names ${QKEY}.
				echoing: {
					command: process.execPath,
					args: ["-e", "console.error('refused', process.argv[1]); process.exit(2)", "${QKEY}"],
				},
				// Cannot be run at all: the spawn error holds the command.
				missing: { command: join(world.home, "${QKEY}", "server") },
			},
		});
		const started = await sessions.start();
		const seen = scriptAgents(sessions, {
			root: [
				cell(
					[
						"import mcp_servers.local as l, mcp_servers.remote as r, pydoc",
						"print(l.__doc__.splitlines()[0])",
						"print(r.__doc__.splitlines()[0])",
						"print(pydoc.render_doc(l, renderer=pydoc.plaintext), pydoc.render_doc(r, renderer=pydoc.plaintext))",
						"print(await l.echo(text='local ok'), await r.echo(text='remote ok'))",
						"for server in mcp.servers(): print('target:', server['target'])",
					].join("\n"),
				),
				cell("import mcp_servers.echoing as e\nawait e.echo(text='x')"),
				cell("import mcp_servers.missing as m\nawait m.echo(text='x')"),
				fauxAssistantMessage("done"),
			],
		});
		expect((await started.agentSession.prompt("use the servers")).status).toBe("ok");
		const root = seen.get("root") ?? [];
		const shown = lastToolResult(root[1]);
		expect(shown).toContain(
			`MCP server 'local' (stdio: ${process.execPath} ${FIXTURE} --token=\${QKEY} --or=\${QKEY:-none}).`,
		);
		expect(shown).toContain(`MCP server 'remote' (http: ${url}?key=\${QKEY}).`);
		expect(shown).toContain("local ok remote ok");
		expect(shown).toContain(
			[
				`target: ${process.execPath} -e ${ECHO_ARG} \${QKEY}`,
				`target: ${process.execPath} ${FIXTURE} --token=\${QKEY} --or=\${QKEY:-none}`,
				`target: ${join(world.home, "${QKEY}", "server")}`,
				`target: ${url}?key=\${QKEY}`,
			].join("\n"),
		);
		expect(lastToolResult(root[2])).toContain("its stderr ended with: refused ${QKEY}");
		expect(lastToolResult(root[3])).toContain(`ENOENT`);
		expect(lastToolResult(root[3])).toContain('MCP server "missing" is down: it did not start');
		const listing = (await started.agentSession.prompt("/mcp")).command?.message ?? "";
		expect(listing).toContain(`remote  http  ${url}?key=\${QKEY}  ready (8 tools)`);
		expect(listing).toContain("echoing  stdio");
		expect(listing).toContain("down: it did not start");
		expect(listing).toContain("refused ${QKEY}");
		await started.dispose();
		// The session file, its artifacts, Prime Context's archive and state: all under the world's root.
		expect(filesHolding(join(world.home, ".."), SECRET)).toEqual([]);
		// Those files do hold what was shown: the templates.
		const holding = filesHolding(join(world.home, ".."), "--token=${QKEY}");
		expect(holding).toContain(started.session.path);
		expect(holding.some((path) => path.includes("prime-context"))).toBe(true);
		for (const context of root) expect(JSON.stringify(context)).not.toContain(SECRET);
		expect(listing).not.toContain(SECRET);
	});

	it("a URL that is not http(s) once expanded is named by its template", () => {
		const world = sessions.newWorld();
		world.writeHome("mcp.json", { mcpServers: { bad: { url: "${QURL}/mcp" } } });
		const config = loadMcpConfig({ agentHome: world.home, cwd: world.project, env: { QURL: `ftp://${SECRET}@host` } });
		expect(config.off.map((entry) => entry.reason)).toEqual([
			`MCP config ${join(world.home, "mcp.json")}: "mcpServers.bad.url" is "\${QURL}/mcp", not an http(s) URL once its variables are expanded. MCP server "bad" is off; the other servers run. Write it as https://host/mcp.`,
		]);
	});
});

describe("a stdio MCP server's environment", () => {
	it("is exactly its env from mcp.json on top of PATH, HOME, USER, SHELL, TERM and LOGNAME", async () => {
		const world = sessions.newWorld({
			OPENAI_API_KEY: "sk-fake",
			MY_SERVICE_TOKEN: "svc-fake",
			PLAIN_SETTING: "plain",
			SECRET_FROM_ENV: "s3cret",
		});
		world.writeHome("mcp.json", {
			mcpServers: {
				fixture: { command: process.execPath, args: [FIXTURE], env: { FIXTURE_SECRET: "${SECRET_FROM_ENV}" } },
			},
		});
		const started = await sessions.start();
		const run = await started.kernel.run("import mcp_servers.fixture as fx\nprint(await fx.get_env(name='*'))");
		// The defaults come from the session's environment only, never from the host process's own.
		const defaults = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"].filter(
			(name) => world.env[name] !== undefined,
		);
		expect(run.cell.stdout).toBe(`${["FIXTURE_SECRET", ...defaults].sort().join(" ")}\n`);
	});
});

describe("a config file that does not parse", () => {
	const KEY = "sk-ant-api03-SECRETSECRETSECRET";

	it("is named with the line and column of the problem, never a slice of its text", () => {
		const world = sessions.newWorld();
		const path = join(world.home, "auth.json");
		const refusal = (text: string) => {
			writeFileSync(path, text);
			try {
				loadAuthFile(path);
			} catch (error) {
				expect(error).toBeInstanceOf(UserError);
				return (error as Error).message;
			}
			throw new Error("auth.json was accepted");
		};
		expect(refusal(`{"anthropic": {"type": "api_key", "key": ${KEY}}}`)).toBe(
			`${path} is not valid JSON (Unexpected character at line 1, column 42).`,
		);
		expect(refusal(`{\n  "anthropic": "${KEY}"\n  "openai": "sk-2"\n}`)).toBe(
			`${path} is not valid JSON (Expected ',' or '}' after property value at line 3, column 3).`,
		);
		expect(refusal(`{"anthropic": "${KEY}`)).toBe(
			`${path} is not valid JSON (Unterminated string at line 1, column 47).`,
		);
		expect(refusal(`{"anthropic": {"key": "${KEY}"}, "openai": [`)).toBe(
			`${path} is not valid JSON (it ends before the JSON value is complete).`,
		);
	});

	it("auth.json's error in a run says where, without the key", async () => {
		const world = sessions.newWorld();
		writeFileSync(join(world.home, "auth.json"), `{"fauxmcp": ${KEY}}`);
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi"], io)).not.toBe(0);
		expect(io.err()).toContain(
			`${join(world.home, "auth.json")} is not valid JSON (Unexpected character at line 1, column 13).`,
		);
		expect(io.err() + io.out()).not.toContain("sk-ant");
	});
});
