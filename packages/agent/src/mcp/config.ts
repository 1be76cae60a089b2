import { join } from "node:path";
import { UserError } from "../errors.js";
import { projectRoot } from "../extensions/index.js";
import { readJsonFile } from "../home/index.js";

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

/**
 * The configured servers, sorted by name: both files in the shape other agents use
 * (`{"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}`); the project's
 * entry of a name replaces the agent home's. `${VAR}` in a value is taken from `env`. Any problem
 * is a `UserError` naming the file and the field. `withoutProject`: the project's file is not
 * read at all (it is not approved: see `ProjectTrust`).
 */
export function loadMcpConfig(options: {
	agentHome: string;
	cwd: string;
	env: NodeJS.ProcessEnv;
	withoutProject?: boolean;
}): McpServerConfig[] {
	const servers = new Map<string, McpServerConfig>();
	const files = mcpConfigFiles(options.agentHome, options.cwd);
	for (const file of options.withoutProject ? files.slice(0, 1) : files) {
		for (const server of readConfigFile(file, options.env)) servers.set(server.name, server);
	}
	const sorted = [...servers.values()].sort((a, b) => a.name.localeCompare(b.name));
	const byModule = new Map<string, McpServerConfig>();
	for (const server of sorted) {
		const other = byModule.get(server.module);
		if (other) {
			throw configError(
				server.file,
				`mcpServers.${server.name}`,
				`has the same Python module name "${server.module}" as "${other.name}" (${other.file})`,
				"Rename one of the two servers.",
			);
		}
		byModule.set(server.module, server);
	}
	return sorted;
}

/** Python's keywords: a module or attribute so named could not be written in an `import` or after a dot. */
const PYTHON_KEYWORDS = new Set(
	"False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(
		" ",
	),
);

/**
 * The Python name of a server or tool name: letters, digits and `_`, never starting with a digit,
 * and a keyword with a `_` after it (`import` is `import_`).
 */
export function moduleName(name: string): string {
	const safe = name.replace(/[^A-Za-z0-9_]/g, "_");
	if (PYTHON_KEYWORDS.has(safe)) return `${safe}_`;
	return /^[0-9]/.test(safe) ? `_${safe}` : safe;
}

function readConfigFile(file: string, env: NodeJS.ProcessEnv): McpServerConfig[] {
	let raw: unknown;
	try {
		raw = readJsonFile(file);
	} catch (error) {
		throw new UserError((error as Error).message, "Fix the file; MCP servers are off until it parses.");
	}
	if (raw === undefined) return [];
	if (!isObject(raw)) throw configError(file, "(top level)", "must be a JSON object", 'Write {"mcpServers": {...}}.');
	const unknown = Object.keys(raw).filter((key) => key !== "mcpServers");
	if (unknown.length > 0) {
		throw configError(file, unknown[0] as string, "is not a known key", 'The file holds one key, "mcpServers".');
	}
	const entries = raw.mcpServers;
	if (entries === undefined) return [];
	if (!isObject(entries)) {
		throw configError(file, "mcpServers", "must be an object of servers by name", EXAMPLE);
	}
	return Object.entries(entries)
		.filter(([, value]) => !(isObject(value) && value.disabled === true))
		.map(([name, value]) => readServer(file, name, value, env));
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
 * `${VAR}` from the environment, each one recorded in `expansions`; a variable that is not set is
 * an error, never an empty string.
 */
function expand(file: string, field: string, raw: unknown, env: NodeJS.ProcessEnv, expansions: Expansion[]): string {
	return String(raw).replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, variable: string) => {
		const value = env[variable];
		if (value === undefined) {
			throw configError(
				file,
				field,
				`uses \${${variable}}, which is not set`,
				`Export ${variable} before starting the agent, or write the value in the file.`,
			);
		}
		expansions.push({ variable, value });
		return value;
	});
}

function configError(file: string, field: string, problem: string, hint: string): UserError {
	return new UserError(`MCP config ${file}: "${field}" ${problem}.`, hint);
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
