/**
 * MCP servers as kernel modules: the host is the MCP client (the official SDK); each configured
 * server is the Python module `mcp_servers.<name>` whose attributes call its tools through host
 * requests. No MCP tool is ever a tool of the model.
 */
export {
	DEFAULT_MCP_TIMEOUT_MS,
	type Expansion,
	type HttpServerConfig,
	loadMcpConfig,
	MAX_MCP_TIMEOUT_MS,
	type McpConfig,
	type McpServerConfig,
	type McpServerOff,
	mcpConfigFiles,
	mcpConfigProblems,
	redact,
	type StdioServerConfig,
} from "./config.js";
export { checkMcpServers, type McpCheck } from "./doctor.js";
export { moduleName, pythonToolNames } from "./python-names.js";
export {
	MCP_RESTARTS,
	McpCallError,
	type McpFailureKind,
	McpServerConnection,
	type McpServerState,
	type McpToolInfo,
	stdioServerEnvironment,
} from "./server-connection.js";
export {
	callReply,
	describeServers,
	MCP_REQUEST,
	type McpServerSummary,
	McpServers,
	restartedMessage,
} from "./servers.js";
