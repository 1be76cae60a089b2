import { type ChildProcess, spawn } from "node:child_process";
import { type AddressInfo, createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** The test MCP server (`fixtures/mcp-server.mjs`): stdio by default, streamable HTTP with `--http`. */
export const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.mjs", import.meta.url));

/**
 * The fixture over HTTP in its own process (pushed on `servers`, for the test to kill); resolves
 * once it listens, on `port` when given. `output.waitFor` awaits a line of its stdout.
 */
export async function startHttpFixture(
	servers: ChildProcess[],
	port?: number,
): Promise<{ url: string; output: { waitFor(pattern: RegExp): Promise<string> } }> {
	const env = port === undefined ? process.env : { ...process.env, MCP_FIXTURE_PORT: String(port) };
	const child = spawn(process.execPath, [FIXTURE, "--http"], { stdio: ["ignore", "pipe", "inherit"], env });
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
	const listening = await waitFor(/listening (\d+)/);
	return { url: `http://127.0.0.1:${listening}/mcp`, output: { waitFor } };
}

/** A loopback port nothing listens on (one the system just gave out and took back). */
export async function closedPort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as AddressInfo).port;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}
