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

/** `promise`, or a rejection naming `what` once `ms` have passed (a hang fails with a reason). */
async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const late = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
	});
	return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function kernelId(kernel: Kernel): string {
	const location = kernel.location;
	return location.kind === "jupyter-server" ? location.kernelId : "";
}

describe("a kernel on a Jupyter Server", () => {
	// 1,000 bytes/s over the default 3 s window: every message of the big print (64 Ki characters
	// each) trips the limit by itself, however often the limiter resets (it does whenever the kernel
	// reports idle, as for each acknowledgement of output), while the small first one passes. So what
	// arrives is the same in every run.
	it("keeps what its iopub rate limit lets through, reports to the character what it dropped, and does not wedge the output pacing", async () => {
		const server = await startJupyterServer({ rateLimits: { dataBytesPerSecond: 1000, messagesPerSecond: 0 } });
		let kernel: Kernel | undefined;
		try {
			kernel = await Kernel.start({ jupyterServer: server.options() });
			const streamed: string[] = [];
			const result = await bounded(
				kernel.execute(
					"import sys\nsys.stdout.write('a' * 500)\nsys.stdout.flush()\nsys.stdout.write('y' * 20_000_000)",
					{ onStream: (chunk) => streamed.push(chunk.text) },
				),
				90_000,
				"the 20 MB print under a 1,000 B/s iopub limit",
			);
			expect(result.status).toBe("ok");
			expect(result.stdout).toBe("a".repeat(500));
			expect(result.lostOutputChars).toBe(20_000_000);
			// The server's notice once (it repeats it each time its limiter trips again), then the
			// host's line saying how much it dropped and how to lift the limit.
			const notice = streamed.filter((text) => text.startsWith("IOPub data rate exceeded."));
			expect(notice.length).toBe(1);
			expect(notice[0]).toContain("ServerApp.iopub_data_rate_limit=1000.0 (bytes/sec)");
			expect(streamed).toEqual(["a".repeat(500), notice[0]]);
			expect(result.stderr).toBe(`${notice[0]}${lostOutputNote(20_000_000, true)}\n`);
			expect(lostOutputNote(20_000_000, true)).toContain(
				"dropped by the Jupyter Server's iopub rate limits and never reached the host: this output is incomplete. To keep all output, start the server with --ZMQChannelsWebsocketConnection.iopub_data_rate_limit=0",
			);
			// The kernel goes on; its next cell's output is under the limit and arrives whole.
			const after = await bounded(kernel.execute("print('after')"), 60_000, "the cell after");
			expect(after.stdout).toBe("after\n");
			expect(after.stderr).toBe("");
			expect(after.lostOutputChars).toBeUndefined();
		} finally {
			await kernel?.shutdown();
			await server.stop();
		}
	});

	// 10 messages/s over 3 s: past 30 stream messages since the limiter last reset, it drops; each
	// line here is its own message, sent far faster than that.
	it("reports what its iopub message-rate limit dropped, once, and goes on pacing output by messages", async () => {
		const server = await startJupyterServer({ rateLimits: { dataBytesPerSecond: 0, messagesPerSecond: 10 } });
		let kernel: Kernel | undefined;
		try {
			kernel = await Kernel.start({ jupyterServer: server.options() });
			let received = 0;
			const notices: string[] = [];
			const result = await bounded(
				kernel.execute("for i in range(1000):\n    print(f'line {i}', flush=True)", {
					onStream: (chunk) => {
						if (chunk.name === "stdout") received += chunk.text.length;
						else notices.push(chunk.text);
					},
				}),
				90_000,
				"1,000 printed lines under a 10 messages/s iopub limit",
			);
			let sent = 0;
			for (let i = 0; i < 1000; i++) sent += `line ${i}\n`.length;
			expect(result.status).toBe("ok");
			expect(received).toBeLessThan(sent);
			expect(result.lostOutputChars).toBe(sent - received);
			expect(notices.length).toBe(1);
			expect(notices[0]).toContain("IOPub message rate exceeded.");
			expect(result.stderr).toBe(`${notices[0]}${lostOutputNote(sent - received, true)}\n`);
			expect((await bounded(kernel.execute("'after'"), 60_000, "the cell after")).result).toBe("'after'");
		} finally {
			await kernel?.shutdown();
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
