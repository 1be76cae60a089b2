import { loadMcpConfig, mcpConfigProblems } from "./config.js";
import { McpServerConnection } from "./server-connection.js";

/** One line of `prime-agent doctor` (the shape of the doctor's own checks). */
export interface McpCheck {
	name: string;
	status: "ok" | "warn" | "fail";
	detail: string;
	fix?: string;
}

/**
 * `prime-agent doctor`: the MCP config files parse, and each configured server starts and lists
 * its tools (each is started, asked, and stopped again; servers are checked one after another).
 * Each problem of the files is a failed "MCP config" line (its detail says what is off and what to
 * do); a server turned off by `"disabled": true` is said so.
 * `withoutProject`: the project's file is not approved: it is neither read nor started.
 */
export async function checkMcpServers(options: {
	agentHome: string;
	cwd: string;
	env: NodeJS.ProcessEnv;
	withoutProject?: boolean;
}): Promise<McpCheck[]> {
	const config = loadMcpConfig(options);
	const { servers: configs, off } = config;
	// The check's name already says "MCP config"; the detail starts at the file.
	const results: McpCheck[] = mcpConfigProblems(config).map((problem) => ({
		name: "MCP config",
		status: "fail",
		detail: problem.replace(/^MCP config /, ""),
	}));
	for (const entry of off.filter((entry) => !entry.invalid)) {
		results.push({
			name: `MCP server "${entry.name}"`,
			status: "ok",
			detail: `off ("disabled": true in ${entry.file})`,
		});
	}
	if (configs.length === 0 && results.length === 0) {
		return [{ name: "MCP servers", status: "ok", detail: "none configured" }];
	}
	for (const config of configs) {
		const connection = new McpServerConnection(config, { cwd: options.cwd, env: options.env });
		const began = Date.now();
		try {
			const tools = await connection.tools();
			const seconds = ((Date.now() - began) / 1000).toFixed(1);
			results.push({
				name: `MCP server "${config.name}"`,
				status: "ok",
				detail: `${tools.length} tool${tools.length === 1 ? "" : "s"}, ready in ${seconds}s (mcp_servers.${config.module})`,
			});
		} catch (error) {
			results.push({
				name: `MCP server "${config.name}"`,
				status: "warn",
				detail: (error as Error).message,
				fix: `Fix "${config.name}" in ${config.file} (the agent runs without it until then).`,
			});
		} finally {
			await connection.stop();
		}
	}
	return results;
}
