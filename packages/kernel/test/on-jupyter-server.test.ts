import { describe, expect, it } from "vitest";
import { Kernel, KernelNotRunningError } from "../src/index.js";
import { lostOutputNote } from "../src/kernel/cell-run.js";
import { startJupyterServer } from "./jupyter-server.js";
import { startKernel, testServer } from "./kernels.js";

/**
 * What only a kernel on a Jupyter Server can meet: the server's own limits and other clients of
 * the server. The rest of the kernel's contract is checked on both providers by the shared tests
 * (see vitest.config.ts, project "kernel-on-jupyter-server").
 */

function kernelId(kernel: Kernel): string {
	const location = kernel.location;
	return location.kind === "jupyter-server" ? location.kernelId : "";
}

describe("a kernel on a Jupyter Server", () => {
	// The server's limiter resets its count whenever the kernel reports idle (as it may for a control
	// request mid-output), so now and then a run drops nothing: it is tried again then.
	it("reports, to the character, the output a server dropped under its default iopub rate limits", {
		timeout: 120_000,
		retry: 2,
	}, async () => {
		const server = await startJupyterServer({ rateLimits: true });
		const kernel = await Kernel.start({ jupyterServer: server.options() });
		try {
			let received = 0;
			const result = await kernel.execute("print('y' * 20_000_000, end='')", {
				onStream: (chunk) => {
					if (/^y+$/.test(chunk.text)) received += chunk.text.length;
				},
			});
			expect(result.status).toBe("ok");
			// The server says it stopped sending; the host says exactly how much never arrived.
			expect(result.stderr).toContain("IOPub data rate exceeded.");
			expect(result.lostOutputChars).toBe(20_000_000 - received);
			expect(received).toBeLessThan(20_000_000);
			expect(result.stderr.endsWith(`${lostOutputNote(20_000_000 - received)}\n`)).toBe(true);
			// Flow control did not wedge on the dropped messages: the kernel goes on.
			expect((await kernel.execute("'after'")).result).toBe("'after'");
		} finally {
			await kernel.shutdown();
			await server.stop();
		}
	});

	it("reports a kernel deleted on the server by another client as died, and refuses the next cell saying so", async () => {
		const { url, token } = testServer();
		// Short heartbeats: the host asks the server about its kernel with each one.
		const kernel = await startKernel({ jupyterServer: { url, token, hostGoneAfterMs: 6_000 } });
		const deaths: unknown[] = [];
		kernel.on("died", (exit) => deaths.push(exit));
		const reason = `was deleted on the server ${url} by another client (or the server's culler)`;
		await kernel.execute("kept = 1");
		const deleted = await fetch(`${url}/api/kernels/${kernelId(kernel)}`, {
			method: "DELETE",
			headers: { Authorization: `token ${token}` },
		});
		expect(deleted.status).toBe(204);
		const result = await kernel.execute("kept");
		expect(result.status).toBe("died");
		expect(result.error?.evalue).toBe(
			`The kernel ${reason} while this cell was running; all kernel variables are gone.`,
		);
		expect(deaths).toEqual([{ code: null, signal: null, reason }]);
		await expect(kernel.execute("1")).rejects.toThrow(KernelNotRunningError);
		await expect(kernel.execute("1")).rejects.toThrow(reason);
	});

	it("reports a kernel killed outside any cell (the server restarts it empty) through `died`", async () => {
		const { url } = testServer();
		const kernel = await startKernel();
		const died = new Promise<unknown>((resolve) => kernel.on("died", resolve));
		const pid = Number((await kernel.execute("import os\nos.getpid()")).result);
		process.kill(pid, "SIGKILL");
		expect(await died).toEqual({
			code: null,
			signal: null,
			reason: `died on the server ${url} (the server put an empty kernel in its place, which was deleted)`,
		});
		expect(kernel.alive).toBe(false);
		await expect(kernel.execute("1")).rejects.toThrow("died on the server");
		await kernel.restart();
		expect((await kernel.execute("'back'")).result).toBe("'back'");
	});
});
