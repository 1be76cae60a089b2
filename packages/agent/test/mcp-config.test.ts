// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is the MCP config's own syntax.

import { join } from "node:path";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import { checkMcpServers, loadMcpConfig, mcpConfigProblems, redact } from "../src/mcp/index.js";
import { FIXTURE } from "./mcp-fixture.js";

const sessions = useFauxSessions();

/** The fixture as a stdio server entry (`extra` fields over it). */
function fixture(extra: Record<string, unknown> = {}): Record<string, unknown> {
	return { command: process.execPath, args: [FIXTURE], ...extra };
}

function homeFile(): string {
	return join(sessions.world.home, "mcp.json");
}

function projectFile(): string {
	return join(sessions.world.project, ".prime", "mcp.json");
}

function load(env: NodeJS.ProcessEnv = {}) {
	return loadMcpConfig({ agentHome: sessions.world.home, cwd: sessions.world.project, env });
}

describe("the project's mcp.json over the agent home's", () => {
	it("the project's entry of a name replaces the home's", () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: { one: { command: "a" }, two: { url: "http://127.0.0.1:1/mcp" } },
		});
		sessions.world.writeProject(
			".prime/mcp.json",
			JSON.stringify({ mcpServers: { one: { command: "b", args: ["x"] } } }),
		);
		const config = load();
		expect(config.servers.map((server) => [server.name, server.transport, server.file])).toEqual([
			["one", "stdio", projectFile()],
			["two", "http", homeFile()],
		]);
		expect(mcpConfigProblems(config)).toEqual([]);
	});

	it('a project entry with "disabled": true turns off the home\'s server of that name, in the kernel and in /mcp', async () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: { fixture: fixture(), other: fixture(), "was-off": { command: "x", disabled: true } },
		});
		sessions.world.writeProject(
			".prime/mcp.json",
			JSON.stringify({ mcpServers: { fixture: { disabled: true }, "was-off": fixture() } }),
		);
		const config = load();
		// The home's disabled entry is turned on by the project's; the home's "fixture" is turned off.
		expect(config.servers.map((server) => [server.name, server.file])).toEqual([
			["other", homeFile()],
			["was-off", projectFile()],
		]);
		const reason = `MCP server "fixture" is turned off by "disabled": true in ${projectFile()}. Remove that line to use it, then start a new session.`;
		expect(config.off).toEqual([{ name: "fixture", module: "fixture", file: projectFile(), reason, invalid: false }]);
		expect(mcpConfigProblems(config)).toEqual([]);

		const started = await sessions.start({ trustProject: true });
		expect(started.notices.filter((notice) => notice.includes("MCP"))).toEqual([]);
		const imported = await started.kernel.run("import mcp_servers.fixture");
		expect(imported.cell.error?.ename).toBe("ModuleNotFoundError");
		expect(imported.cell.error?.evalue).toBe(reason);
		const attribute = await started.kernel.run("mcp.fixture");
		expect(attribute.cell.error?.evalue).toBe(reason);
		const restarted = await started.kernel.run("await mcp.restart('fixture')");
		expect([restarted.cell.error?.ename, restarted.cell.error?.evalue]).toEqual(["McpError", reason]);
		const others = await started.kernel.run("print(await mcp.other.echo(text='a'), await mcp.was_off.echo(text='b'))");
		expect(others.cell.stdout).toBe("a b\n");
		const listing = (await started.agentSession.prompt("/mcp")).command?.message ?? "";
		expect(listing.split("\n").slice(-1)).toEqual([reason]);
		const checks = await checkMcpServers({
			agentHome: sessions.world.home,
			cwd: sessions.world.project,
			env: sessions.world.env,
		});
		expect(checks.map((check) => [check.name, check.status, check.detail.split(",")[0]])).toEqual([
			['MCP server "fixture"', "ok", `off ("disabled": true in ${projectFile()})`],
			['MCP server "other"', "ok", "8 tools"],
			['MCP server "was-off"', "ok", "8 tools"],
		]);
	});
});

describe("a bad entry", () => {
	it("turns that entry off with a warning naming the file and the field; the other servers of both files run", async () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: { home: fixture(), cline: fixture({ autoApprove: ["echo"] }) },
		});
		sessions.world.writeProject(
			".prime/mcp.json",
			JSON.stringify({ mcpServers: { project: fixture(), typo: fixture({ timeout: "60s" }) } }),
		);
		const cline = `MCP config ${homeFile()}: "mcpServers.cline.autoApprove" is not a field of a stdio server. MCP server "cline" is off; the other servers run. Its fields: type, command, args, env, cwd, timeout, disabled.`;
		const typo = `MCP config ${projectFile()}: "mcpServers.typo.timeout" must be a whole number of milliseconds, at most 600000. MCP server "typo" is off; the other servers run. For example 60000.`;
		expect(mcpConfigProblems(load())).toEqual([cline, typo]);

		const started = await sessions.start({ trustProject: true });
		expect(started.notices.filter((notice) => notice.includes("MCP"))).toEqual([
			`Extension builtin:mcp: ${cline}`,
			`Extension builtin:mcp: ${typo}`,
		]);
		const run = await started.kernel.run(
			"print(await mcp.home.echo(text='home'), await mcp.project.echo(text='project'))",
		);
		expect(run.cell.stdout).toBe("home project\n");
		const imported = await started.kernel.run("import mcp_servers.cline");
		expect(imported.cell.error?.evalue).toBe(cline);
		const listing = (await started.agentSession.prompt("/mcp")).command?.message ?? "";
		expect(listing.split("\n").filter((line) => !line.startsWith("Servers start"))).toEqual([
			`home  stdio  ${process.execPath} ${FIXTURE}  ready (8 tools)  (mcp_servers.home)`,
			`project  stdio  ${process.execPath} ${FIXTURE}  ready (8 tools)  (mcp_servers.project)`,
			cline,
			typo,
		]);
	});

	it("a file that does not parse turns its own servers off; the other file's run", async () => {
		sessions.world.writeHome("mcp.json", { mcpServers: { home: fixture() } });
		sessions.world.writeProject(".prime/mcp.json", '{"mcpServers": {"project": ');
		const problem = `MCP config ${projectFile()} is not valid JSON (it ends before the JSON value is complete). Its MCP servers are off; the other file's run. Fix the file, then start a new session.`;
		expect(mcpConfigProblems(load())).toEqual([problem]);
		const started = await sessions.start({ trustProject: true });
		expect(started.notices.filter((notice) => notice.includes("MCP"))).toEqual([`Extension builtin:mcp: ${problem}`]);
		expect((await started.kernel.run("print(await mcp.home.echo(text='up'))")).cell.stdout).toBe("up\n");
		const imported = await started.kernel.run("import mcp_servers.project");
		expect(imported.cell.error?.evalue).toBe(
			`no MCP server named 'project': ${problem} Fix the file, then start a new session.`,
		);
	});

	it("two names with one Python module: the second by name is off, the first runs", () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: { "my-server": { command: "a" }, my_server: { command: "b" } },
		});
		const config = load();
		// Sorted by name ("_" before "-"), the second is off.
		expect(config.servers.map((server) => server.name)).toEqual(["my_server"]);
		expect(mcpConfigProblems(config)).toEqual([
			`MCP config ${homeFile()}: "mcpServers.my-server" has the same Python module name "my_server" as "my_server" (${homeFile()}). MCP server "my-server" is off; the other servers run. Rename one of the two servers, then start a new session.`,
		]);
	});
});

describe("${VAR} and ${VAR:-default}", () => {
	it("expand as Claude Code expands them: the variable when set (even empty), else the default", () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: {
				s: {
					command: "${TOOL_BIN:-node}",
					args: [
						"${UNSET:-fallback}",
						"${SET:-x}",
						"${EMPTY:-x}",
						"${UNSET:-}",
						"a${SET}b",
						"${UNSET:-with spaces/and:colons}",
					],
					env: { TOKEN: "${SET:-none}" },
				},
				h: { url: "${HOST:-http://127.0.0.1:1}/mcp", headers: { Authorization: "Bearer ${SET:-anonymous}" } },
			},
		});
		const config = load({ SET: "v4lue", EMPTY: "" });
		expect(mcpConfigProblems(config)).toEqual([]);
		const [h, s] = config.servers;
		expect(s?.transport === "stdio" && [s.command, s.args, s.env]).toEqual([
			"node",
			["fallback", "v4lue", "", "", "av4lueb", "with spaces/and:colons"],
			{ TOKEN: "v4lue" },
		]);
		expect(h?.transport === "http" && [h.url, h.headers]).toEqual([
			"http://127.0.0.1:1/mcp",
			{ Authorization: "Bearer v4lue" },
		]);
		// What is shown is the file's text; a value from the environment is written back as its name.
		expect(s?.target).toBe(
			"${TOOL_BIN:-node} ${UNSET:-fallback} ${SET:-x} ${EMPTY:-x} ${UNSET:-} a${SET}b ${UNSET:-with spaces/and:colons}",
		);
		expect(redact("token v4lue refused", s?.expansions ?? [])).toBe("token ${SET} refused");
		// A default is the file's own text, not a secret: only values from the environment are recorded.
		expect(s?.expansions.map((expansion) => expansion.variable)).toEqual(["SET", "EMPTY", "SET", "SET"]);
	});

	it("a server started with a default gets it, and doctor starts the expanded command", async () => {
		sessions.world.writeHome("mcp.json", {
			mcpServers: {
				fixture: {
					command: `\${FIXTURE_NODE:-${process.execPath}}`,
					args: [FIXTURE],
					env: { FIXTURE_SECRET: "${FIXTURE_UNSET:-the default}" },
				},
			},
		});
		const checks = await checkMcpServers({
			agentHome: sessions.world.home,
			cwd: sessions.world.project,
			env: sessions.world.env,
		});
		expect(checks.map((check) => [check.name, check.status, check.detail.split(",")[0]])).toEqual([
			['MCP server "fixture"', "ok", "8 tools"],
		]);
		const started = await sessions.start();
		const run = await started.kernel.run("print(await mcp.fixture.get_env(name='FIXTURE_SECRET'))");
		expect(run.cell.stdout).toBe("the default\n");
	});
});
