import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { HostRequestHandler } from "prime-agent-kernel";
import { MAX_MCP_TIMEOUT_MS, type McpServerConfig } from "./config.js";
import { McpCallError, McpServerConnection, type McpServerState } from "./server-connection.js";

/** Host request types the kernel's `mcp_servers` modules send. */
export const MCP_REQUEST = {
	/** `{server}` → `{tools: [{name, python_name, description, input_schema}]}` (starts the server). */
	tools: "mcp.tools",
	/**
	 * `{server, tool, arguments, timeout?}` → `{value}` (structured content, else the text), `{content}`
	 * (the parts, when one is not text: the kernel saves each image to a file), or `{failed: {kind, message}}`.
	 */
	call: "mcp.call",
	/** `{server}` → `{message}` once it is started again, or `{failed: {kind, message}}`. */
	restart: "mcp.restart",
} as const;

/** A server as `/mcp` and the kernel list it. */
export interface McpServerSummary {
	name: string;
	module: string;
	transport: "stdio" | "http";
	/** The command line or the URL as written in the config: `${VAR}` is shown, never its value. */
	target: string;
	state: McpServerState;
	detail: string;
}

/** The session's MCP servers by name: one connection each, started on first use. */
export class McpServers {
	private readonly connections = new Map<string, McpServerConnection>();

	constructor(configs: readonly McpServerConfig[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
		for (const config of configs) this.connections.set(config.name, new McpServerConnection(config, options));
	}

	get size(): number {
		return this.connections.size;
	}

	/** A server by its name or its Python module name. */
	get(name: string): McpServerConnection | undefined {
		return this.connections.get(name) ?? [...this.connections.values()].find((entry) => entry.config.module === name);
	}

	list(): McpServerSummary[] {
		return [...this.connections.values()].map((connection) => {
			const config = connection.config;
			return {
				name: config.name,
				module: config.module,
				transport: config.transport,
				target: config.target,
				state: connection.state,
				detail: connection.detail,
			};
		});
	}

	/** The handlers answering the kernel's modules. They never throw for a failed call: the reply says why. */
	hostHandlers(): Record<string, HostRequestHandler> {
		return {
			[MCP_REQUEST.tools]: async (payload) => {
				const tools = await this.require(payload.server).tools();
				return {
					tools: tools.map((tool) => ({
						name: tool.name,
						python_name: tool.pythonName,
						description: tool.description,
						input_schema: tool.inputSchema,
					})),
				};
			},
			[MCP_REQUEST.call]: async (payload) => {
				const server = this.require(payload.server);
				if (typeof payload.tool !== "string" || payload.tool === "") throw new Error("mcp.call needs a tool name");
				const args = payload.arguments ?? {};
				if (typeof args !== "object" || Array.isArray(args)) {
					return { failed: { kind: "bad_request", message: "tool arguments must be keyword arguments (a dict)" } };
				}
				const timeout = typeof payload.timeout === "number" && payload.timeout > 0 ? payload.timeout * 1000 : undefined;
				if (timeout !== undefined && timeout > MAX_MCP_TIMEOUT_MS) {
					const message = `timeout= is at most ${MAX_MCP_TIMEOUT_MS / 1000} s (the kernel waits no longer for the host)`;
					return { failed: { kind: "bad_request", message } };
				}
				try {
					return callReply(await server.call(payload.tool, args as Record<string, unknown>, timeout));
				} catch (error) {
					if (error instanceof McpCallError) return { failed: { kind: error.kind, message: error.message } };
					throw error;
				}
			},
			[MCP_REQUEST.restart]: async (payload) => {
				const server = this.require(payload.server);
				try {
					await server.restart();
					return { message: restartedMessage(server) };
				} catch (error) {
					if (error instanceof McpCallError) return { failed: { kind: error.kind, message: error.message } };
					throw error;
				}
			},
		};
	}

	/** Stop every server that was started (with the session). */
	async stopAll(): Promise<void> {
		await Promise.all([...this.connections.values()].map((connection) => connection.stop()));
	}

	private require(name: unknown): McpServerConnection {
		const found = typeof name === "string" ? this.get(name) : undefined;
		if (found) return found;
		const names = [...this.connections.keys()];
		throw new Error(
			`no MCP server named "${String(name)}" (configured: ${names.length > 0 ? names.join(", ") : "none"})`,
		);
	}
}

/**
 * The reply to a call: `{value}`, the structured content when the tool gives it, else the text (one
 * string, parts joined by newlines) when every part is text; else `{content}`, the parts, which
 * the kernel turns into Python values (an image becomes a file: see `McpImage`).
 */
export function callReply(result: CallToolResult): { value: unknown } | { content: unknown[] } {
	if (result.structuredContent !== undefined) return { value: result.structuredContent };
	const parts = result.content ?? [];
	if (parts.every((part) => part.type === "text")) return { value: parts.map((part) => part.text).join("\n") };
	return { content: parts };
}

/** What `/mcp restart` and `mcp.restart()` answer once the server is up again. */
export function restartedMessage(server: McpServerConnection): string {
	return `MCP server "${server.config.name}" restarted: ${server.detail}.`;
}

/** `/mcp`: one line per server, or where to configure one. */
export function describeServers(servers: McpServers, files: readonly string[]): string {
	const list = servers.list();
	if (list.length === 0) {
		return `No MCP servers configured. Add them to ${files.join(" or ")} as {"mcpServers": {"name": {"command": "...", "args": []}}} and start a new session.`;
	}
	const lines = list.map(
		(server) =>
			`${server.name}  ${server.transport}  ${server.target}  ${server.detail}  (mcp_servers.${server.module})`,
	);
	return [
		...lines,
		'Servers start on first use; `/mcp restart <name>` (in a cell: `await mcp.restart("<name>")`) starts one again, `/mcp tools <name>` lists its tools.',
	].join("\n");
}
