import { UserError } from "../errors.js";
import { loadMcpConfig } from "./config.js";
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
 * `withoutProject`: the project's file is not approved: it is neither read nor started.
 */
export async function checkMcpServers(options: {
	agentHome: string;
	cwd: string;
	env: NodeJS.ProcessEnv;
	withoutProject?: boolean;
}): Promise<McpCheck[]> {
	let configs: ReturnType<typeof loadMcpConfig>;
	try {
		configs = loadMcpConfig(options);
	} catch (error) {
		const hint = error instanceof UserError ? error.hint : "Fix the file.";
		// The check's name already says "MCP config"; the detail starts at the file.
		const detail = (error as Error).message.replace(/^MCP config /, "");
		return [{ name: "MCP config", status: "fail", detail, fix: hint }];
	}
	if (configs.length === 0) return [{ name: "MCP servers", status: "ok", detail: "none configured" }];
	const results: McpCheck[] = [];
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
