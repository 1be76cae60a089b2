import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteServerKernel, installKernelspec, Kernel } from "../src/index.js";
import { startJupyterServer, type TestJupyterServer } from "./jupyter-server.js";

const here = dirname(fileURLToPath(import.meta.url));

let server: TestJupyterServer;
beforeAll(async () => {
	server = await startJupyterServer();
}, 240_000);
afterAll(async () => {
	await server?.stop();
});

describe("a kernel on a Jupyter Server", () => {
	it("runs cells with streams, results and errors, and is deleted on shutdown", async () => {
		const kernel = await Kernel.start({ jupyterServer: server.options() });
		try {
			const result = await kernel.execute("import os\nprint('hi'); x = 41\nx + 1");
			expect(result.status).toBe("ok");
			expect(result.stdout).toBe("hi\n");
			expect(result.result).toBe("42");
			const error = await kernel.execute("1/0");
			expect(error.status).toBe("error");
			expect(error.error?.ename).toBe("ZeroDivisionError");
			expect(kernel.location.kind).toBe("jupyter-server");
		} finally {
			await kernel.shutdown();
		}
		const listed = await fetch(`${server.url}/api/kernels`, { headers: { Authorization: `token ${server.token}` } });
		expect(await listed.json()).toEqual([]);
	});
});

async function serverKernels(): Promise<{ id: string; name: string }[]> {
	const response = await fetch(`${server.url}/api/kernels`, { headers: { Authorization: `token ${server.token}` } });
	return (await response.json()) as { id: string; name: string }[];
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/** Starts a host process with a kernel on the server, then SIGKILLs the host; resolves with what it started. */
async function killHostOfKernel(kernelName?: string): Promise<{ kernelId: string; pid: number; childPid: number }> {
	const host = spawn(process.execPath, [join(here, "remote-host.mjs")], {
		env: {
			...process.env,
			PRIME_TEST_SERVER_URL: server.url,
			JUPYTER_TOKEN: server.token,
			PRIME_TEST_HOST_GONE_MS: "3000",
			PRIME_TEST_KERNEL_NAME: kernelName ?? "",
		},
		stdio: ["ignore", "pipe", "inherit"],
	});
	try {
		const line = await new Promise<string>((resolve, reject) => {
			let out = "";
			host.stdout.on("data", (chunk: Buffer) => {
				out += chunk.toString();
				if (out.includes("\n")) resolve(out.split("\n")[0]);
			});
			host.once("exit", (code) => reject(new Error(`the host exited (${code}) before starting its kernel`)));
		});
		const started = JSON.parse(line) as { kernelId: string; pid: number; childPid: number };
		expect(alive(started.pid)).toBe(true);
		return started;
	} finally {
		host.kill("SIGKILL");
	}
}

describe("a host that is gone", () => {
	it("a SIGKILLed host's kernel ends itself and what it started once the heartbeat stops", async () => {
		const { kernelId, pid, childPid } = await killHostOfKernel();
		await until("the kernel to end itself", () => !alive(pid) && !alive(childPid), 60_000);
		// A stock kernelspec: the server restarts the kernel it lost, empty (the next host start deletes it).
		await until("the server to restart it", async () => (await serverKernels()).length === 1, 30_000);
		expect((await serverKernels()).map((kernel) => kernel.id)).toEqual([kernelId]);
		// A delete while the server is still restarting it is refused (500): asked again until it is gone.
		await until(
			"the restarted kernel to be deleted",
			async () => {
				await deleteServerKernel(server.options(), kernelId).catch(() => {});
				return (await serverKernels()).length === 0;
			},
			60_000,
		);
	}, 120_000);

	it("with prime-agent's kernelspec, the server gives the kernel up by itself", async () => {
		const spec = installKernelspec({
			name: "prime-test",
			kernelsDir: server.kernelsDir,
			python: process.env.PRIME_AGENT_KERNEL_PYTHON,
		});
		try {
			const { kernelId, pid } = await killHostOfKernel("prime-test");
			await until("the kernel to end itself", () => !alive(pid), 60_000);
			// Each restart finds the tombstone and exits; past its restart limit the server forgets the kernel.
			await until("the server to forget the kernel", async () => (await serverKernels()).length === 0, 90_000);
			expect((await serverKernels()).map((kernel) => kernel.id)).not.toContain(kernelId);
		} finally {
			rmSync(spec.path, { recursive: true, force: true });
		}
	}, 180_000);
});

/** A TCP proxy in front of the server whose connections a test can cut (a WebSocket that drops). */
async function startProxy(
	target: number,
): Promise<{ url: string; cut(): void; refuse(on: boolean): void; close(): Promise<void> }> {
	const sockets = new Set<Socket>();
	let refusing = false;
	const proxy = createServer((client) => {
		if (refusing) {
			client.destroy();
			return;
		}
		const upstream = connect(target, "127.0.0.1");
		for (const socket of [client, upstream]) {
			sockets.add(socket);
			socket.on("close", () => sockets.delete(socket));
			socket.on("error", () => {});
		}
		client.pipe(upstream).pipe(client);
	});
	await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
	const { port } = proxy.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		cut: () => {
			for (const socket of sockets) socket.destroy();
		},
		refuse: (on) => {
			refusing = on;
		},
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise((resolve) => proxy.close(resolve));
		},
	};
}

describe("a WebSocket that drops", () => {
	it("is reconnected once: the cell's output before, during and after the drop all arrives", async () => {
		const proxy = await startProxy(Number(new URL(server.url).port));
		const kernel = await Kernel.start({ jupyterServer: { url: proxy.url, token: server.token } });
		try {
			let cutDone = false;
			const result = await kernel.execute("import time\nprint('before', flush=True)\ntime.sleep(4)\nprint('after')", {
				onStream: () => {
					if (cutDone) return;
					cutDone = true;
					proxy.cut();
				},
			});
			expect(result.status).toBe("ok");
			expect(result.stdout).toBe("before\nafter\n");
			expect((await kernel.execute("print(1 + 1)")).stdout).toBe("2\n");
		} finally {
			await kernel.shutdown();
			await proxy.close();
		}
		expect(await serverKernels()).toEqual([]);
	}, 120_000);

	it("a second drop ends the kernel with a clear error, keeps the cell's output so far, and deletes the kernel", async () => {
		const proxy = await startProxy(Number(new URL(server.url).port));
		const kernel = await Kernel.start({ jupyterServer: { url: proxy.url, token: server.token } });
		try {
			proxy.cut();
			await until("the first reconnection", async () => (await kernel.execute("1")).status === "ok", 30_000);
			let cutDone = false;
			const result = await kernel.execute("import time\nprint('partial', flush=True)\ntime.sleep(30)", {
				onStream: () => {
					if (cutDone) return;
					cutDone = true;
					proxy.cut();
				},
			});
			expect(result.status).toBe("died");
			expect(result.stdout).toBe("partial\n");
			expect(result.error?.evalue).toBe(
				`The kernel lost its connection to ${proxy.url} (the WebSocket dropped a second time) and was deleted there while this cell was running; all kernel variables are gone.`,
			);
			await until("the kernel to be deleted", async () => (await serverKernels()).length === 0, 30_000);
		} finally {
			await kernel.shutdown();
			await proxy.close();
		}
	}, 120_000);
});

describe("a server that cannot be used", () => {
	it("names a wrong token, a server that is down, a URL that is not a Jupyter Server, and a missing kernelspec", async () => {
		const start = (options: { url: string; token?: string; kernelName?: string }) =>
			Kernel.start({ jupyterServer: options }).then(
				async (kernel) => {
					await kernel.shutdown();
					return "started";
				},
				(error: Error) => error.message,
			);
		expect(await start({ url: server.url, token: "wrong" })).toBe(
			`${server.url} refused the token (403): set JUPYTER_TOKEN (or the variable named by kernel.tokenEnv) to the server's token.`,
		);
		const closed = await startProxy(1);
		await closed.close();
		expect(await start({ url: closed.url, token: server.token })).toBe(
			`Cannot reach the Jupyter Server at ${closed.url} (connection refused): is it running, and on that port?`,
		);
		const web = createHttpServer((_request, response) => {
			response.statusCode = 404;
			response.end("not found");
		});
		await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
		const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
		try {
			expect(await start({ url: webUrl })).toBe(
				`${webUrl} answered 404 at /api: it is not a Jupyter Server, or its base path is missing from the URL (e.g. http://host:8888/user/me/).`,
			);
		} finally {
			await new Promise((resolve) => web.close(resolve));
		}
		expect(await start({ url: server.url, token: server.token, kernelName: "nope" })).toBe(
			`${server.url} has no kernelspec named "nope" (it has: python3); set kernel.kernelName to one of them, or install one with \`prime-agent kernelspec install\` on that machine.`,
		);
		expect(await start({ url: "gpu-box:8888" })).toBe(
			'The Jupyter Server URL "gpu-box:8888" must start with http:// or https:// (the WebSocket address is derived from it).',
		);
		expect(await serverKernels()).toEqual([]);
	}, 120_000);
});
