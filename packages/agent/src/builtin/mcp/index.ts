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
	moduleName,
} from "../../mcp/index.js";
import type { ProjectTrust } from "../../trust/index.js";

export const MCP_EXTENSION_NAME = "builtin:mcp";

const FIX_AND_RESTART = "Fix the file, then start a new session.";
const USAGE = "Usage: /mcp (list servers), /mcp tools <name>, /mcp restart <name>";

/** `trust`: whether the project's `.prime/mcp.json` is approved (else it is not even read). */
export default function mcpExtension(api: ExtensionAPI, trust: ProjectTrust): void {
	// A broken file: the session runs without MCP servers, warns once, and `/mcp` and the kernel say why.
	let configs: McpServerConfig[] = [];
	let problem: string | undefined;
	try {
		configs = loadMcpConfig({
			agentHome: api.agentHome,
			cwd: api.cwd,
			env: api.env,
			withoutProject: !trust.allows("mcp"),
		});
	} catch (error) {
		api.warn((error as Error).message);
		problem = `MCP servers are off in this session: ${(error as Error).message}`;
	}
	const files = mcpConfigFiles(api.agentHome, api.cwd);
	const servers = new McpServers(configs, { cwd: api.cwd, env: api.env });
	const held = heldServers(trust, configs);
	// `/mcp` names the project's servers that did not start, and why, after the ones that may.
	const describe = () => {
		if (problem) return `${problem} ${FIX_AND_RESTART}`;
		const notStarted = Object.values(held);
		if (servers.size === 0 && notStarted.length > 0) return notStarted.join("\n");
		return [describeServers(servers, files), ...notStarted].join("\n");
	};

	for (const [type, handler] of Object.entries(servers.hostHandlers())) api.onHostRequest(type, handler);
	const described = servers.list().map(({ name, module, transport, target }) => ({ name, module, transport, target }));
	api.addKernelStartup(
		`from prime_agent_runtime import mcp_servers as _mcp_servers\n_mcp_servers.install(*${pythonJson([described, files, problem ?? null, null, held])})\ndel _mcp_servers\n`,
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
				return `MCP server "${server.config.name}" restarted: ${server.detail}.`;
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
			if (configs.some((config) => config.name === name)) continue; // the agent home's server of that name runs
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
objects (else text). Failures raise McpToolError, McpServerDown or McpTimeout with the server's
message. Keep results in variables and print only what you need.`;
}

/** A Python expression for a JSON value: its JSON text (a valid Python string literal), parsed. */
export function pythonJson(value: unknown): string {
	return `__import__("json").loads(${JSON.stringify(JSON.stringify(value))})`;
}
