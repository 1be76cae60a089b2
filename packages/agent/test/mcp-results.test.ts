import type { ChildProcess } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { afterEach, describe, expect, it } from "vitest";
import { pythonToolNames } from "../src/mcp/index.js";
import { closedPort, FIXTURE, startHttpFixture } from "./mcp-fixture.js";

const sessions = useFauxSessions();
const servers: ChildProcess[] = [];
afterEach(() => {
	for (const server of servers.splice(0)) server.kill("SIGKILL");
});

/** The fixture with its extra tools (colliding names, images) as the stdio server "fixture". */
function configureExtra(): void {
	sessions.world.writeHome("mcp.json", {
		mcpServers: { fixture: { command: process.execPath, args: [FIXTURE, "--more-tools"] } },
	});
}

async function cell(started: Awaited<ReturnType<typeof sessions.start>>, code: string) {
	return (await started.kernel.run(code)).cell;
}

const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("tool names that map to one Python name", () => {
	it("are told apart the same way whatever order the server lists them in", () => {
		const expected = new Map([
			["get_file", "get_file"],
			["get-file", "get_file_2"],
		]);
		expect(pythonToolNames(["get-file", "get_file"])).toEqual(expected);
		expect(pythonToolNames(["get_file", "get-file"])).toEqual(expected);
		// A name taken by a tool of that very name is skipped; the rest go by name.
		const three = pythonToolNames(["a.b", "a_b_2", "a-b", "import"]);
		expect([...three].sort()).toEqual([
			["a-b", "a_b"],
			["a.b", "a_b_3"],
			["a_b_2", "a_b_2"],
			["import", "import_"],
		]);
	});

	it("are both listed and called by the same name before and after help()", async () => {
		configureExtra();
		const started = await sessions.start();
		// Before anything listed the tools: the call goes by the name alone.
		const before = await cell(
			started,
			"import mcp_servers.fixture as fx\nprint(await fx.get_file(), '|', await fx.get_file_2())",
		);
		expect(before.stdout).toBe("get_file (underscore) | get-file (dash)\n");
		const listed = await cell(
			started,
			"print(sorted((t['python_name'], t['name']) for t in fx.tools() if 'file' in t['name']))\nimport pydoc\ntext = pydoc.render_doc(fx, renderer=pydoc.plaintext)\nprint('get_file: The underscored one.' in text, 'get_file_2: The dashed one.' in text)",
		);
		expect(listed.stdout).toBe("[('get_file', 'get_file'), ('get_file_2', 'get-file')]\nTrue True\n");
		const after = await cell(
			started,
			"print(await fx.get_file(), '|', await fx.get_file_2(), '|', await fx.call('get-file'))",
		);
		expect(after.stdout).toBe("get_file (underscore) | get-file (dash) | get-file (dash)\n");
	});
});

describe("image content", () => {
	it("is saved to a file in the session's output folder: path, mime type and size, and display() shows it", async () => {
		configureExtra();
		const started = await sessions.start();
		const alone = await cell(
			started,
			[
				"import os, mcp_servers.fixture as fx",
				"img = await fx.image(caption=False)",
				"print(type(img).__name__, img.mime_type, img.size, os.path.dirname(img.path) == os.environ['PRIME_KERNEL_OUTPUT_DIR'])",
				"print(img.path)",
				"img",
			].join("\n"),
		);
		expect(alone.status).toBe("ok");
		const [summary, path = ""] = alone.stdout.split("\n");
		expect(summary).toBe("McpImage image/png 70 True");
		expect(path).toMatch(/\/mcp-fixture-image-[0-9a-f]{8}\.png$/);
		expect(readFileSync(path).equals(Buffer.from(PNG_BASE64, "base64"))).toBe(true);
		expect(statSync(path).mode & 0o777).toBe(0o600);
		// What the model reads of it: the path, type and size, never the bytes.
		expect(alone.result).toBe(`McpImage(path='${path}', mime_type='image/png', size=70)`);
		const shown = await cell(started, "display(img)");
		expect(shown.displays).toHaveLength(1);
		expect(shown.displays[0]?.data["image/png"]).toBe(PNG_BASE64);
		expect(shown.displays[0]?.data["text/plain"]).toBe(`McpImage(path='${path}', mime_type='image/png', size=70)`);
		// With a caption: the parts in order, the text as text.
		const both = await cell(
			started,
			"parts = await fx.image(caption=True)\nprint(parts[0], type(parts[1]).__name__, parts[1].path != img.path, len(parts))",
		);
		expect(both.stdout).toBe("a red dot McpImage True 2\n");
	});

	it("an image part that is not base64 raises McpToolError saying so, whether the SDK or the kernel finds it", async () => {
		configureExtra();
		const started = await sessions.start();
		const run = await cell(started, "import mcp_servers.fixture as fx\nawait fx.broken_image()");
		expect(run.error?.ename).toBe("McpToolError");
		expect(run.error?.evalue).toContain('MCP server "fixture" tool "broken-image": MCP error -32602');
		expect(run.error?.evalue).toContain('"message": "Invalid Base64 string"');
		// A host that let it through: the kernel refuses it too, and writes no file.
		const kernel = await cell(
			started,
			[
				"import os",
				"from prime_agent_runtime.mcp_servers import _content_value",
				"before = sorted(os.listdir(os.environ['PRIME_KERNEL_OUTPUT_DIR']))",
				"try:",
				"    _content_value([{'type': 'image', 'data': 'not base64!', 'mimeType': 'image/png'}], 'fixture', 'broken-image')",
				"except Exception as error:",
				"    print(type(error).__name__, error)",
				"print(sorted(os.listdir(os.environ['PRIME_KERNEL_OUTPUT_DIR'])) == before)",
			].join("\n"),
		);
		expect(kernel.stdout).toBe(
			"McpToolError MCP server 'fixture' tool 'broken-image' returned an image whose data is not base64; the server sent a broken result\nTrue\n",
		);
	});
});

describe("restarting a server from a cell", () => {
	it("await mcp.restart(name) starts a server that is down after its second crash", async () => {
		configureExtra();
		const started = await sessions.start();
		await cell(started, "import mcp_servers.fixture as fx\nawait fx.crash()");
		await cell(started, "await fx.crash()");
		const down = await cell(started, "await fx.echo(text='x')");
		expect(down.error?.ename).toBe("McpServerDown");
		const restarted = await cell(started, "print(await mcp.restart('fixture'))\nprint(await fx.echo(text='back'))");
		expect(restarted.stdout).toBe('MCP server "fixture" restarted: ready (12 tools).\nback\n');
		const unknown = await cell(started, "await mcp.restart('nope')");
		expect(unknown.error?.ename).toBe("McpError");
		expect(unknown.error?.evalue).toBe(
			`no MCP server named 'nope' (configured: fixture); servers are configured in ${join(sessions.world.home, "mcp.json")} or ${join(sessions.world.project, ".prime", "mcp.json")}`,
		);
	});

	it("an HTTP server that refuses the connection says ECONNREFUSED and what to do; once it listens, mcp.restart reaches it", async () => {
		const port = await closedPort();
		const url = `http://127.0.0.1:${port}/mcp`;
		sessions.world.writeHome("mcp.json", {
			// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
			mcpServers: { remote: { url, headers: { Authorization: "Bearer ${REMOTE_TOKEN}" } } },
		});
		sessions.world.env.REMOTE_TOKEN = "fixture-token";
		const started = await sessions.start();
		const refused = await cell(started, "await mcp.remote.echo(text='x')");
		expect(refused.error?.ename).toBe("McpServerDown");
		expect(refused.error?.evalue).toBe(
			`MCP server "remote" is down: it did not start (ECONNREFUSED: nothing accepts connections at ${url}). Start the server, or fix "url" of "remote" in ${join(sessions.world.home, "mcp.json")}, then restart it: \`await mcp.restart("remote")\` in a cell, or \`/mcp restart remote\`.`,
		);
		const failed = await cell(started, "await mcp.restart('remote')");
		expect(failed.error?.ename).toBe("McpServerDown");
		expect(failed.error?.evalue).toBe(refused.error?.evalue);
		await startHttpFixture(servers, port);
		const back = await cell(
			started,
			"print(await mcp.restart('remote'))\nprint(await mcp.remote.echo(text='over http'))",
		);
		expect(back.stdout).toBe('MCP server "remote" restarted: ready (8 tools).\nover http\n');
		// The server goes away: the call in flight fails (reset or refused, as the socket goes), the next one is refused.
		const [server] = servers.splice(0);
		const exited = new Promise((resolve) => server?.once("exit", resolve));
		server?.kill("SIGKILL");
		await exited;
		const gone = await cell(started, "await mcp.remote.echo(text='x')");
		expect(gone.error?.ename).toBe("McpServerDown");
		expect(gone.error?.evalue).toMatch(
			/^MCP server "remote" stopped during the call to "echo" \((ECONNRESET|ECONNREFUSED: nothing accepts connections at http:\/\/127\.0\.0\.1:\d+\/mcp)\); it is connected to again on the next call\.$/,
		);
		const again = await cell(started, "await mcp.remote.echo(text='x')");
		expect(again.error?.evalue).toBe(refused.error?.evalue);
	});
});
