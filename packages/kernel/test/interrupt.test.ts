import { describe, expect, it } from "vitest";
import { runUntilPrinted, startKernel } from "./kernels.js";

describe("interrupting a cell", () => {
	it("ends a cell awaiting asyncio.sleep at once, keeps the variables, and runs the next cell at once", async () => {
		const kernel = await startKernel();
		await kernel.execute("kept = 'yes'");
		const cell = runUntilPrinted(
			kernel,
			"import asyncio\nprint('waiting', flush=True)\nawait asyncio.sleep(20)",
			"waiting",
		);
		await cell.started;
		const before = Date.now();
		expect(await kernel.interrupt()).toEqual({ stillBusy: false });
		const result = await cell.result;
		expect(result.status).toBe("aborted");
		const next = await kernel.execute("kept");
		expect(next.result).toBe("'yes'");
		expect(Date.now() - before).toBeLessThan(5_000);
	});
});

describe("interrupting what a cell waits on", () => {
	it("ends a host request the host never answers, and the kernel stays usable", async () => {
		const kernel = await startKernel({ startupCode: "from prime_kernel import host_request" });
		kernel.onHostRequest("never", () => new Promise(() => {}));
		await kernel.execute("kept = 41");
		const cell = runUntilPrinted(kernel, "print('asking', flush=True)\nawait host_request('never', {})", "asking");
		await cell.started;
		expect(await kernel.interrupt()).toEqual({ stillBusy: false });
		const result = await cell.result;
		expect(result.status).toBe("aborted");
		expect(result.error?.ename).toBe("CancelledError");
		expect((await kernel.execute("kept + 1")).result).toBe("42");
	});

	it("ends a %%bash cell's subprocess", async () => {
		const kernel = await startKernel();
		await kernel.execute("kept = 'bash'");
		const cell = runUntilPrinted(kernel, "%%bash\necho sleeping\nsleep 30\necho woke", "sleeping");
		await cell.started;
		const before = Date.now();
		expect(await kernel.interrupt()).toEqual({ stillBusy: false });
		const result = await cell.result;
		expect(result.status).toBe("aborted");
		expect(result.error?.ename).toBe("CalledProcessError");
		expect(result.stdout).not.toContain("woke");
		expect((await kernel.execute("kept")).result).toBe("'bash'");
		expect(Date.now() - before).toBeLessThan(5_000);
	});
});

describe("an interrupted subprocess's own way of ending", () => {
	it("is aborted when a %%bash script traps the interrupt and exits 130", async () => {
		const kernel = await startKernel();
		const cell = runUntilPrinted(
			kernel,
			"%%bash\ntrap 'exit 130' INT\necho sleeping\nsleep 30 &\nwait\necho woke",
			"sleeping",
		);
		await cell.started;
		expect(await kernel.interrupt()).toEqual({ stillBusy: false });
		const result = await cell.result;
		// 255 when the script exited before IPython signalled it and its status was lost (see cell-run.ts).
		expect(result.error?.evalue).toMatch(/exit status (?:130|255)\.$/);
		expect(result.status).toBe("aborted");
		expect(result.stdout).not.toContain("woke");
	});
});

describe("what an interrupted cell reports", () => {
	it("reports the cell's own error, not `aborted`, when the cell caught the interrupt and raised something else", async () => {
		const kernel = await startKernel();
		const cell = runUntilPrinted(
			kernel,
			"import time\ntry:\n    print('busy', flush=True)\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    raise ValueError('cleanup failed')",
			"busy",
		);
		await cell.started;
		await kernel.interrupt();
		const result = await cell.result;
		expect(result.error?.ename).toBe("ValueError");
		expect(result.status).toBe("error");
	});
});
