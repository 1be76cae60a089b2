import { join } from "node:path";
import { UserError } from "../errors.js";
import { projectRoot } from "../extensions/index.js";
import { readJsonFile } from "../home/index.js";
import { moduleName } from "./python-names.js";

/** Per-call limit when a server's config sets none (the SDK's own default). */
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
/** The longest call limit: the kernel gives up on any host request after 600 s. */
export const MAX_MCP_TIMEOUT_MS = 600_000;

interface ServerBase {
	/** The name under `mcpServers`, as written in the file. */
	name: string;
	/** The Python name of its module (`mcp_servers.<module>`): the name with every other character as `_`. */
	module: string;
	/** The file that defined it (the project's wins over the agent home's). */
	file: string;
	/** Limit of one tool call, in milliseconds. */
	timeoutMs: number;
	/**
	 * The command line or the URL as written in the file, `${VAR}` left unexpanded: what `/mcp`,
	 * the kernel's module and every message show. The expanded fields exist only to connect.
	 */
	target: string;
	/** What each `${VAR}` in the server's fields expanded to; `redact` puts the names back in any text. */
	expansions: Expansion[];
}

/** One `${VAR}` of a server's config and the value it was replaced by. */
export interface Expansion {
	variable: string;
	value: string;
}

/**
 * `text` with every expanded value written as its `${VAR}` again: in one pass, longest value
 * first, so no value is left half-shown and no name put back is matched again.
 */
export function redact(text: string, expansions: readonly Expansion[]): string {
	const names = new Map<string, string>();
	for (const { variable, value } of expansions) if (value !== "" && !names.has(value)) names.set(value, variable);
	if (names.size === 0) return text;
	const values = [...names.keys()].sort((a, b) => b.length - a.length);
	const pattern = new RegExp(values.map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
	return text.replace(pattern, (value) => `\${${names.get(value)}}`);
}

/**
 * A server started as a process and spoken to over its stdin and stdout. Its environment is
 * exactly `env` on top of the few variables every program needs (`PATH`, `HOME`, `USER`, `SHELL`,
 * `TERM`, `LOGNAME`: the MCP SDK's list, see `stdioServerEnvironment`): nothing else of the agent's,
 * so no key reaches a server unless its `env` names it.
 */
export interface StdioServerConfig extends ServerBase {
	transport: "stdio";
	command: string;
	args: string[];
	env: Record<string, string>;
	/** Working directory of the process; default the session's. */
	cwd?: string;
}

/** A server reached over streamable HTTP. */
export interface HttpServerConfig extends ServerBase {
	transport: "http";
	url: string;
	headers: Record<string, string>;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** `mcp.json` in the agent home and `.prime/mcp.json` in the project, in the order they apply. */
export function mcpConfigFiles(agentHome: string, cwd: string): string[] {
	return [join(agentHome, "mcp.json"), join(projectRoot(cwd), ".prime", "mcp.json")];
}

/** What the two files configure: the servers that run, the names that do not, and the files that could not be read. */
export interface McpConfig {
	/** The servers that run, sorted by name. */
	servers: McpServerConfig[];
	/**
	 * Names the files configure that do not run, sorted by name: turned off by `"disabled": true`
	 * (the project's entry turns the agent home's server of its name off), or an entry with a
	 * problem (that entry only: the other servers of both files run).
	 */
	off: McpServerOff[];
	/**
	 * A file that could not be read (not JSON, not the shape of one): its servers are off, the other
	 * file's run. Said as `MCP config <file> ...`, then what is off and what to do.
	 */
	unreadable: string[];
}

/**
 * Every problem of the files, to warn the user of once: the files that could not be read, then each
 * entry with a problem (`MCP config <file>: "<field>" <problem>.`, that it alone is off, what to do).
 */
export function mcpConfigProblems(config: McpConfig): string[] {
	return [...config.unreadable, ...config.off.filter((entry) => entry.invalid).map((entry) => entry.reason)];
}

/** A configured name that does not run in this session. */
export interface McpServerOff {
	name: string;
	module: string;
	/** The file whose entry turned it off. */
	file: string;
	/** What `import mcp_servers.<module>` and `/mcp` say: why it is off and how to turn it on. */
	reason: string;
	/** A problem of the file (not a `"disabled": true`). */
	invalid: boolean;
}

/**
 * Both files in the shape other agents use (`{"mcpServers": {"name": {"command", "args", "env"} |
 * {"url", "headers"}}}`); the project's entry of a name replaces the agent home's, and one with
 * `"disabled": true` turns the home's off. `${VAR}` and `${VAR:-default}` in a value are taken
 * from `env`. Never throws: a file that cannot be read turns its own servers off (`unreadable`),
 * an entry with a problem turns that name off (`off`, `invalid`). `withoutProject`: the project's
 * file is not read at all (it is not approved: see `ProjectTrust`).
 */
export function loadMcpConfig(options: {
	agentHome: string;
	cwd: string;
	env: NodeJS.ProcessEnv;
	withoutProject?: boolean;
}): McpConfig {
	const entries = new Map<string, McpServerConfig | McpServerOff>();
	const unreadable: string[] = [];
	const files = mcpConfigFiles(options.agentHome, options.cwd);
	for (const file of options.withoutProject ? files.slice(0, 1) : files) {
		const read = readConfigFile(file, options.env);
		if (read instanceof UserError) {
			unreadable.push(`${read.message} Its MCP servers are off; the other file's run. ${read.hint}`);
			continue;
		}
		for (const entry of read) entries.set(entry.name, entry);
	}
	const sorted = [...entries.values()].sort((a, b) => a.name.localeCompare(b.name));
	const servers: McpServerConfig[] = [];
	const off = sorted.filter((entry): entry is McpServerOff => "invalid" in entry);
	const byModule = new Map<string, McpServerConfig>();
	for (const server of sorted) {
		if ("invalid" in server) continue;
		const other = byModule.get(server.module);
		if (other) {
			const problem = configError(
				server.file,
				`mcpServers.${server.name}`,
				`has the same Python module name "${server.module}" as "${other.name}" (${other.file})`,
				"Rename one of the two servers, then start a new session.",
			);
			const reason = entryOff(server.name, problem);
			off.push({ name: server.name, module: server.module, file: server.file, reason, invalid: true });
			continue;
		}
		byModule.set(server.module, server);
		servers.push(server);
	}
	off.sort((a, b) => a.name.localeCompare(b.name));
	return { servers, off, unreadable };
}

/** The problem of one entry, and that it alone is off. */
function entryOff(name: string, problem: UserError): string {
	return `${problem.message} MCP server "${name}" is off; the other servers run. ${problem.hint}`;
}

/** The entries of one file, or the problem that keeps the whole file from being read. */
function readConfigFile(file: string, env: NodeJS.ProcessEnv): (McpServerConfig | McpServerOff)[] | UserError {
	let raw: unknown;
	try {
		raw = readJsonFile(file);
	} catch (error) {
		return new UserError(`MCP config ${(error as Error).message}`, "Fix the file, then start a new session.");
	}
	if (raw === undefined) return [];
	if (!isObject(raw)) return configError(file, "(top level)", "must be a JSON object", 'Write {"mcpServers": {...}}.');
	const unknown = Object.keys(raw).filter((key) => key !== "mcpServers");
	if (unknown.length > 0) {
		return configError(file, unknown[0] as string, "is not a known key", 'The file holds one key, "mcpServers".');
	}
	const entries = raw.mcpServers;
	if (entries === undefined) return [];
	if (!isObject(entries)) return configError(file, "mcpServers", "must be an object of servers by name", EXAMPLE);
	return Object.entries(entries).map(([name, value]) => {
		// A disabled entry needs no other field: `{"disabled": true}` is enough to turn the home's server off.
		if (isObject(value) && value.disabled === true) {
			return {
				name,
				module: moduleName(name),
				file,
				reason: `MCP server "${name}" is turned off by "disabled": true in ${file}. Remove that line to use it, then start a new session.`,
				invalid: false,
			};
		}
		try {
			return readServer(file, name, value, env);
		} catch (error) {
			if (!(error instanceof UserError)) throw error;
			return { name, module: moduleName(name), file, reason: entryOff(name, error), invalid: true };
		}
	});
}

const EXAMPLE =
	'Write each server as {"command": "npx", "args": ["-y", "some-server"], "env": {}} or {"url": "https://host/mcp", "headers": {}}.';

const STDIO_KEYS = ["type", "command", "args", "env", "cwd", "timeout", "disabled"];
const HTTP_KEYS = ["type", "url", "headers", "timeout", "disabled"];

function readServer(file: string, name: string, value: unknown, env: NodeJS.ProcessEnv): McpServerConfig {
	const field = `mcpServers.${name}`;
	if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
		throw configError(file, field, "has a name other than letters, digits, `_`, `-` and `.`", "Rename the server.");
	}
	if (!isObject(value)) throw configError(file, field, "must be an object", EXAMPLE);
	const type = value.type;
	if (type === "sse") {
		throw configError(
			file,
			`${field}.type`,
			'is "sse", the older HTTP+SSE transport, which is not supported',
			'Point "url" at the server\'s streamable HTTP endpoint and write "type": "http" (or leave "type" out).',
		);
	}
	if (type !== undefined && !["stdio", "http", "streamable-http", "streamableHttp"].includes(String(type))) {
		throw configError(file, `${field}.type`, `is "${String(type)}"`, 'Use "stdio" or "http" (streamable HTTP).');
	}
	if (value.disabled !== undefined && typeof value.disabled !== "boolean") {
		throw configError(file, `${field}.disabled`, "must be true or false", 'Write "disabled": true to turn it off.');
	}
	const isHttp = type === undefined ? value.url !== undefined : type !== "stdio";
	const allowed = isHttp ? HTTP_KEYS : STDIO_KEYS;
	const extra = Object.keys(value).find((key) => !allowed.includes(key));
	if (extra) {
		throw configError(
			file,
			`${field}.${extra}`,
			`is not a field of ${isHttp ? "an HTTP" : "a stdio"} server`,
			`Its fields: ${allowed.join(", ")}.`,
		);
	}
	const timeout = value.timeout;
	if (
		timeout !== undefined &&
		(typeof timeout !== "number" || !Number.isInteger(timeout) || timeout <= 0 || timeout > MAX_MCP_TIMEOUT_MS)
	) {
		throw configError(
			file,
			`${field}.timeout`,
			`must be a whole number of milliseconds, at most ${MAX_MCP_TIMEOUT_MS}`,
			"For example 60000.",
		);
	}
	const expansions: Expansion[] = [];
	const base = { name, module: moduleName(name), file, timeoutMs: (timeout as number) ?? DEFAULT_MCP_TIMEOUT_MS };
	const text = (key: string, raw: unknown) => expand(file, `${field}.${key}`, raw, env, expansions);
	if (isHttp) {
		if (typeof value.url !== "string" || value.url === "")
			throw configError(file, `${field}.url`, "must be a URL string", EXAMPLE);
		const url = text("url", value.url);
		if (!/^https?:\/\//.test(url)) {
			const expanded = url === value.url ? "" : " once its variables are expanded";
			throw configError(
				file,
				`${field}.url`,
				`is "${value.url}", not an http(s) URL${expanded}`,
				"Write it as https://host/mcp.",
			);
		}
		const headers = stringMap(file, `${field}.headers`, value.headers, env, expansions);
		return { ...base, target: value.url, expansions, transport: "http", url, headers };
	}
	if (typeof value.command !== "string" || value.command === "") {
		throw configError(file, `${field}.command`, "must be the program to run (a string)", EXAMPLE);
	}
	const args = value.args ?? [];
	if (!Array.isArray(args) || args.some((arg) => typeof arg !== "string")) {
		throw configError(file, `${field}.args`, "must be a list of strings", EXAMPLE);
	}
	if (value.cwd !== undefined && typeof value.cwd !== "string") {
		throw configError(file, `${field}.cwd`, "must be a folder path (a string)", "Remove it to use the session's.");
	}
	return {
		...base,
		target: [value.command, ...(args as string[])].join(" "),
		expansions,
		transport: "stdio",
		command: text("command", value.command),
		args: args.map((arg, index) => text(`args[${index}]`, arg)),
		env: stringMap(file, `${field}.env`, value.env, env, expansions),
		...(typeof value.cwd === "string" ? { cwd: text("cwd", value.cwd) } : {}),
	};
}

function stringMap(
	file: string,
	field: string,
	raw: unknown,
	env: NodeJS.ProcessEnv,
	expansions: Expansion[],
): Record<string, string> {
	if (raw === undefined) return {};
	if (!isObject(raw)) throw configError(file, field, "must be an object of strings", EXAMPLE);
	const result: Record<string, string> = {};
	for (const [key, value] of Object.entries(raw)) {
		if (typeof value !== "string") throw configError(file, `${field}.${key}`, "must be a string", EXAMPLE);
		result[key] = expand(file, `${field}.${key}`, value, env, expansions);
	}
	return result;
}

/**
 * `${VAR}` and `${VAR:-default}` as Claude Code expands them: the variable's value when it is set
 * (even to ""), else the default. Each value taken from `env` is recorded in `expansions` (a
 * default is the file's own text, not a secret). A variable that is not set and has no default is
 * an error, never an empty string.
 */
function expand(file: string, field: string, raw: unknown, env: NodeJS.ProcessEnv, expansions: Expansion[]): string {
	return String(raw).replace(
		/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
		(_, variable: string, fallback: string | undefined) => {
			const value = env[variable];
			if (value !== undefined) {
				expansions.push({ variable, value });
				return value;
			}
			if (fallback !== undefined) return fallback;
			throw configError(
				file,
				field,
				`uses \${${variable}}, which is not set`,
				`Export ${variable} before starting the agent, write \${${variable}:-default}, or write the value in the file.`,
			);
		},
	);
}

function configError(file: string, field: string, problem: string, hint: string): UserError {
	return new UserError(`MCP config ${file}: "${field}" ${problem}.`, hint);
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
