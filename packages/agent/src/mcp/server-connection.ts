import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DEFAULT_INHERITED_ENV_VARS } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { type McpServerConfig, redact, type StdioServerConfig } from "./config.js";
import { pythonToolNames } from "./python-names.js";
import { StdioGroupTransport } from "./stdio-transport.js";

/** Where a server is in its life; `/mcp` shows it. */
export type McpServerState =
	/** Configured, not used yet (servers start on first use). */
	| "not started"
	| "starting"
	| "ready"
	/** Exited (or became unreachable) by itself; the next use starts it again, once per session. */
	| "crashed"
	/** Could not start, or crashed again after its restart: calls fail until `restart()` (`mcp.restart` in a cell, `/mcp restart`). */
	| "down"
	/** Stopped with the session. */
	| "stopped";

/** Why a call failed; the kernel raises a matching Python exception. */
export type McpFailureKind = "tool_error" | "server_down" | "timeout" | "bad_request";

/** A failed MCP call, carrying the server's own message where there is one. */
export class McpCallError extends Error {
	constructor(
		readonly kind: McpFailureKind,
		message: string,
	) {
		super(message);
		this.name = "McpCallError";
	}
}

/** A tool as the kernel lists it. */
export interface McpToolInfo {
	name: string;
	/** The attribute name in the server's Python module (see `pythonToolNames`: never two alike). */
	pythonName: string;
	description: string;
	inputSchema: Tool["inputSchema"];
}

/** Automatic restarts after a crash, per server and session (`restart()` gives one more). */
export const MCP_RESTARTS = 1;
const STDERR_TAIL_CHARS = 2000;
/** Starting a server (an `npx` download included) and listing its tools may take this long, whatever the call limit. */
export const MCP_START_TIMEOUT_MS = 60_000;

/**
 * One configured server: started on first use, its tools listed once per start, restarted once
 * after a crash, stopped with the session. The SDK speaks the protocol; this class only decides
 * when to connect and turns failures into messages that say what to do.
 */
export class McpServerConnection {
	private client: Client | undefined;
	private connecting: Promise<Client> | undefined;
	private toolList: McpToolInfo[] | undefined;
	private stopping = false;
	private restartsLeft = MCP_RESTARTS;
	private stderrTail = "";
	private lastError: string | undefined;
	state: McpServerState = "not started";

	constructor(
		readonly config: McpServerConfig,
		private readonly options: { cwd: string; env: NodeJS.ProcessEnv },
	) {}

	/** A line for `/mcp`: state, and the reason when it is down or crashed. */
	get detail(): string {
		const tools = this.state === "ready" && this.toolList ? ` (${this.toolList.length} tools)` : "";
		const why =
			(this.state === "down" || this.state === "crashed") && this.lastError
				? `: ${redact(this.lastError, this.config.expansions)}`
				: "";
		return `${this.state}${tools}${why}`;
	}

	/** The server's tools (starting it when needed). */
	async tools(): Promise<McpToolInfo[]> {
		await this.connected();
		return this.toolList ?? [];
	}

	/**
	 * Call `tool` (its MCP name or its Python name) with `args`. Resolves with the server's result;
	 * a tool error, a dead server or a timeout throws `McpCallError`.
	 */
	async call(tool: string, args: Record<string, unknown>, timeoutMs?: number): Promise<CallToolResult> {
		const client = await this.connected();
		const known = this.toolList ?? [];
		const name = known.find((entry) => entry.name === tool)?.name ?? known.find((e) => e.pythonName === tool)?.name;
		const limit = timeoutMs ?? this.config.timeoutMs;
		let result: CallToolResult;
		try {
			result = (await client.callTool({ name: name ?? tool, arguments: args }, undefined, {
				timeout: limit,
			})) as CallToolResult;
		} catch (error) {
			throw this.callFailure(error, tool, name, limit, known);
		}
		if (result.isError) {
			const text = contentText(result) || "the tool reported an error without a message";
			throw this.failure("tool_error", `${this.label} tool "${name ?? tool}": ${text}${unknownHint(name, known)}`);
		}
		return result;
	}

	/** Stop the server (a later use starts it again only through `restart`). */
	async stop(): Promise<void> {
		this.stopping = true;
		const client = this.client ?? (await this.connecting?.catch(() => undefined));
		this.client = undefined;
		this.state = "stopped";
		await closeClient(client);
	}

	/**
	 * `/mcp restart` and `await mcp.restart(name)` in a cell: stop it if running, forget a crash,
	 * and start it now. Throws `McpCallError` (`server_down`) when it does not start.
	 */
	async restart(): Promise<void> {
		const client = this.client;
		this.stopping = true;
		this.client = undefined;
		await closeClient(client);
		this.stopping = false;
		this.restartsLeft = MCP_RESTARTS;
		this.state = "not started";
		await this.connected();
	}

	/** A failure to report: no value a `${VAR}` expanded to is in its message (the server's own text included). */
	private failure(kind: McpFailureKind, message: string): McpCallError {
		return new McpCallError(kind, redact(message, this.config.expansions));
	}

	private get label(): string {
		return `MCP server "${this.config.name}"`;
	}

	/** How the model (a cell) and the user (a command) start it again. */
	private get restartHow(): string {
		return `\`await mcp.restart(${JSON.stringify(this.config.name)})\` in a cell, or \`/mcp restart ${this.config.name}\``;
	}

	/** A failure in a few words; a refused connection names the code and what it means. */
	private describeError(error: unknown): string {
		const code = networkCode(error);
		if (code === "ECONNREFUSED") return `ECONNREFUSED: nothing accepts connections at ${this.config.target}`;
		if (code === "ENOTFOUND") return `ENOTFOUND: the host of ${this.config.target} is not found`;
		if (code) return code;
		return error instanceof Error ? error.message : String(error);
	}

	private connected(): Promise<Client> {
		if (this.client && this.state === "ready") return Promise.resolve(this.client);
		if (this.connecting) return this.connecting;
		if (this.state === "stopped") {
			return Promise.reject(this.failure("server_down", `${this.label} was stopped with the session.`));
		}
		if (this.state === "down") {
			return Promise.reject(
				this.failure(
					"server_down",
					`${this.label} is down: ${this.lastError}. Fix it, then restart it: ${this.restartHow}.`,
				),
			);
		}
		if (this.state === "crashed") {
			if (this.restartsLeft <= 0) {
				this.state = "down";
				return this.connected();
			}
			this.restartsLeft--;
		}
		this.connecting = this.connect().finally(() => {
			this.connecting = undefined;
		});
		return this.connecting;
	}

	private async connect(): Promise<Client> {
		this.state = "starting";
		this.stopping = false;
		this.stderrTail = "";
		const client = new Client({ name: "prime-agent", version: "0.1.0" });
		const transport = this.transport();
		client.onclose = () => {
			if (this.client !== client || this.stopping) return;
			this.client = undefined;
			this.toolList = undefined;
			this.lastError = `it exited${this.stderrNote()}`;
			this.state = this.restartsLeft > 0 ? "crashed" : "down";
		};
		try {
			const timeout = Math.max(this.config.timeoutMs, MCP_START_TIMEOUT_MS);
			await client.connect(transport, { timeout });
			const listed = await client.listTools(undefined, { timeout });
			const pythonNames = pythonToolNames(listed.tools.map((tool) => tool.name));
			this.toolList = listed.tools.map((tool) => ({
				name: tool.name,
				pythonName: pythonNames.get(tool.name) ?? tool.name,
				description: tool.description ?? "",
				inputSchema: tool.inputSchema,
			}));
		} catch (error) {
			await client.close().catch(() => {});
			this.lastError = `it did not start (${this.describeError(error)})${this.stderrNote()}`;
			this.state = "down";
			const fix =
				this.config.transport === "http" && networkCode(error) === "ECONNREFUSED"
					? `Start the server, or fix "url" of "${this.config.name}" in ${this.config.file}`
					: `Check "${this.config.name}" in ${this.config.file} (\`prime-agent doctor\` starts it and says what fails)`;
			throw this.failure(
				"server_down",
				`${this.label} is down: ${this.lastError}. ${fix}, then restart it: ${this.restartHow}.`,
			);
		}
		this.client = client;
		this.state = "ready";
		return client;
	}

	private transport(): StdioGroupTransport | StreamableHTTPClientTransport {
		const config = this.config;
		if (config.transport === "http") {
			return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
		}
		const transport = new StdioGroupTransport({
			command: config.command,
			args: config.args,
			env: stdioServerEnvironment(config, this.options.env),
			cwd: config.cwd ?? this.options.cwd,
			stderr: "pipe",
		});
		transport.stderr?.on("data", (chunk: Buffer) => {
			this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
		});
		return transport;
	}

	private stderrNote(): string {
		const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
		return tail ? `; its stderr ended with: ${tail}` : "";
	}

	private callFailure(
		error: unknown,
		asked: string,
		resolved: string | undefined,
		limit: number,
		known: McpToolInfo[],
	): McpCallError {
		const tool = resolved ?? asked;
		if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
			return this.failure(
				"timeout",
				`${this.label} tool "${tool}" did not answer within ${limit / 1000} s; the call was cancelled. Pass timeout= to call() or raise "timeout" (ms) in ${this.config.file}.`,
			);
		}
		const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
		if (closed || !(error instanceof McpError)) {
			// The process exited or the URL stopped answering: what happens next depends on the restart left.
			if (this.state === "ready" && !closed) {
				this.client = undefined;
				this.lastError = this.describeError(error);
				this.state = this.restartsLeft > 0 ? "crashed" : "down";
			}
			const next =
				this.state === "crashed"
					? `it is ${this.config.transport === "http" ? "connected to" : "started"} again on the next call`
					: `it is down; once it is fixed, restart it: ${this.restartHow}`;
			return this.failure(
				"server_down",
				`${this.label} stopped during the call to "${tool}" (${this.lastError ?? this.describeError(error)}); ${next}.`,
			);
		}
		return this.failure("tool_error", `${this.label} tool "${tool}": ${error.message}${unknownHint(resolved, known)}`);
	}
}

/**
 * A stdio server's whole environment: the variables every program needs, as the MCP SDK names
 * them (`PATH`, `HOME`, `USER`, `SHELL`, `TERM`, `LOGNAME`), from the session's environment (the
 * SDK fills in the agent process's own for one the session lacks), then exactly what the config's
 * `env` names. Nothing else of the agent's environment (its keys) reaches a server.
 */
export function stdioServerEnvironment(config: StdioServerConfig, hostEnv: NodeJS.ProcessEnv): Record<string, string> {
	const inherited: Record<string, string> = {};
	for (const key of DEFAULT_INHERITED_ENV_VARS) {
		const value = hostEnv[key];
		// As the SDK: a shell function exported in the environment is never passed on.
		if (value !== undefined && !value.startsWith("()")) inherited[key] = value;
	}
	return { ...inherited, ...config.env };
}

/** Close a client; an HTTP session is ended at the server first (DELETE), as the protocol asks. */
async function closeClient(client: Client | undefined): Promise<void> {
	if (!client) return;
	const transport = client.transport;
	if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
	await client.close().catch(() => {});
}

/** For a name the server does not list: the names it does. */
function unknownHint(name: string | undefined, known: McpToolInfo[]): string {
	if (name !== undefined || known.length === 0) return "";
	const names = known.map((tool) => tool.pythonName).sort();
	return ` (its tools: ${names.join(", ")})`;
}

function contentText(result: CallToolResult): string {
	return result.content
		.map((part) => (part.type === "text" ? part.text : ""))
		.join("\n")
		.trim();
}

/** The system error code behind a failed `fetch` (`ECONNREFUSED`), which it puts in its `cause`. */
function networkCode(error: unknown): string | undefined {
	const cause = (error as { cause?: { code?: unknown } }).cause?.code;
	return typeof cause === "string" ? cause : undefined;
}
