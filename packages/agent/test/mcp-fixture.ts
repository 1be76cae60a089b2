import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The test MCP server (`fixtures/mcp-server.mjs`): stdio by default, streamable HTTP with `--http`. */
export const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.mjs", import.meta.url));

/**
 * The fixture over HTTP in its own process (pushed on `servers`, for the test to kill); resolves
 * once it listens. `output.waitFor` awaits a line of its stdout.
 */
export async function startHttpFixture(
	servers: ChildProcess[],
): Promise<{ url: string; output: { waitFor(pattern: RegExp): Promise<string> } }> {
	const child = spawn(process.execPath, [FIXTURE, "--http"], { stdio: ["ignore", "pipe", "inherit"] });
	servers.push(child);
	let out = "";
	child.stdout?.on("data", (chunk) => {
		out += chunk;
	});
	const waitFor = (pattern: RegExp) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const match = pattern.exec(out);
				if (!match) return;
				child.stdout?.off("data", check);
				resolve(match[1] ?? match[0]);
			};
			child.stdout?.on("data", check);
			child.once("exit", (code) => reject(new Error(`the HTTP fixture exited (${code}) before printing ${pattern}`)));
			check();
		});
	const port = await waitFor(/listening (\d+)/);
	return { url: `http://127.0.0.1:${port}/mcp`, output: { waitFor } };
}
