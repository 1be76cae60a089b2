import { spawn } from "node:child_process";
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
		await deleteServerKernel(server.options(), kernelId);
		expect(await serverKernels()).toEqual([]);
	}, 120_000);

	it("with prime-agent's kernelspec, the server gives the kernel up by itself", async () => {
		installKernelspec({
			name: "prime-test",
			kernelsDir: server.kernelsDir,
			python: process.env.PRIME_AGENT_KERNEL_PYTHON,
		});
		const { kernelId, pid } = await killHostOfKernel("prime-test");
		await until("the kernel to end itself", () => !alive(pid), 60_000);
		// Each restart finds the tombstone and exits; past its restart limit the server forgets the kernel.
		await until("the server to forget the kernel", async () => (await serverKernels()).length === 0, 90_000);
		expect((await serverKernels()).map((kernel) => kernel.id)).not.toContain(kernelId);
	}, 180_000);
});
