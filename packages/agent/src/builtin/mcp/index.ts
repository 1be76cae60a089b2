/**
 * MCP servers in Prime Agent, through the public extension API: the configured servers become
 * the kernel modules `mcp_servers.<name>` (and `mcp.<name>`), answered by host requests; `/mcp`
 * shows them; they stop with the session. The model's tool list never changes.
 */
import type { ExtensionAPI } from "../../extensions/api.js";
import {
	describeServers,
	loadMcpConfig,
	type McpServerConfig,
	McpServers,
	mcpConfigFiles,
	mcpConfigProblems,
	moduleName,
	restartedMessage,
} from "../../mcp/index.js";
import type { ProjectTrust } from "../../trust/index.js";

export const MCP_EXTENSION_NAME = "builtin:mcp";

const USAGE = "Usage: /mcp (list servers), /mcp tools <name>, /mcp restart <name>";

/** `trust`: whether the project's `.prime/mcp.json` is approved (else it is not even read). */
export default function mcpExtension(api: ExtensionAPI, trust: ProjectTrust): void {
	// Each problem of the files is warned once; only what it concerns is off, and `/mcp` and the kernel say why.
	const config = loadMcpConfig({
		agentHome: api.agentHome,
		cwd: api.cwd,
		env: api.env,
		withoutProject: !trust.allows("mcp"),
	});
	for (const problem of mcpConfigProblems(config)) api.warn(problem);
	const { servers: configs, off } = config;
	// A file that could not be read: said for any name no server or entry explains.
	const problem = config.unreadable.length > 0 ? config.unreadable.join(" ") : undefined;
	const files = mcpConfigFiles(api.agentHome, api.cwd);
	const servers = new McpServers(configs, { cwd: api.cwd, env: api.env });
	// Names that do not run, by module, with why: turned off, broken, or the project's and not approved.
	const notRunning: Record<string, string> = {
		...Object.fromEntries(off.map((entry) => [entry.module, entry.reason])),
		...heldServers(trust, configs),
	};
	// `/mcp` lists the servers, then the names that do not run and why, then a file that could not be read.
	const describe = () => {
		const lines = Object.values(notRunning);
		if (problem) lines.push(problem);
		if (servers.size === 0 && lines.length > 0) return lines.join("\n");
		return [describeServers(servers, files), ...lines].join("\n");
	};

	for (const [type, handler] of Object.entries(servers.hostHandlers())) api.onHostRequest(type, handler);
	const described = servers.list().map(({ name, module, transport, target }) => ({ name, module, transport, target }));
	api.addKernelStartup(
		`from prime_agent_runtime import mcp_servers as _mcp_servers\n_mcp_servers.install(*${pythonJson([described, files, problem ?? null, null, notRunning])})\ndel _mcp_servers\n`,
		{ names: ["mcp"] },
	);

	if (configs.length > 0) {
		const section = promptSection(servers);
		api.on("before_agent_start", () => ({ systemPromptAppend: section }));
	}

	api.on("session_shutdown", () => servers.stopAll());

	api.registerCommand("mcp", {
		description: "MCP servers: list them and their state, list a server's tools, restart one",
		handler: async (args) => {
			const [action = "", name] = args.split(/\s+/);
			if (action === "") return describe();
			if (action !== "tools" && action !== "restart") throw new Error(`unknown /mcp command "${action}". ${USAGE}`);
			if (!name) throw new Error(`/mcp ${action} needs a server name. ${USAGE}`);
			const server = servers.get(name);
			if (!server) throw new Error(`no MCP server named "${name}". ${describe()}`);
			if (action === "restart") {
				await server.restart();
				return restartedMessage(server);
			}
			const tools = await server.tools();
			return tools
				.map((tool) => `${tool.pythonName}: ${tool.description.split("\n")[0] || "(no description)"}`)
				.join("\n");
		},
	});
}

/** The project's servers that do not start (not approved), by module: why, as `import mcp_servers.NAME` says it. */
function heldServers(trust: ProjectTrust, configs: readonly McpServerConfig[]): Record<string, string> {
	const held: Record<string, string> = {};
	for (const item of trust.held.filter((entry) => entry.kind === "mcp")) {
		for (const name of item.names) {
			// The agent home's server of that name runs (one that is off is said off for the held entry's reason).
			if (configs.some((config) => config.name === name)) continue;
			held[moduleName(name)] =
				`MCP server "${name}" of .prime/mcp.json is ${trust.heldState(item)}, so it was not started: run prime-agent in this folder to review it, or pass --trust-project.`;
		}
	}
	return held;
}

/** What the model is told: the module names only (tools are listed by the modules themselves). */
function promptSection(servers: McpServers): string {
	const names = servers
		.list()
		.map((server) => `mcp_servers.${server.module}`)
		.join(", ");
	return `# MCP servers

These MCP servers are Python modules in the kernel (not tools): ${names}.
\`import mcp_servers.NAME as m\`, then \`m.tools()\` (or \`help(m)\`) lists its tools with their input
schemas, and \`await m.tool_name(arg=...)\` calls one; it returns structured content as Python
objects (else text; an image is saved to a file: McpImage with path, mime_type, size). Failures
raise McpToolError, McpServerDown or McpTimeout with the server's message; a server that is down
starts again with \`await mcp.restart("NAME")\`. Keep results in variables and print only what you need.`;
}

/** A Python expression for a JSON value: its JSON text (a valid Python string literal), parsed. */
export function pythonJson(value: unknown): string {
	return `__import__("json").loads(${JSON.stringify(JSON.stringify(value))})`;
}
