import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, inject } from "vitest";
import { type CellResult, type ExecuteOptions, Kernel, type KernelStartOptions } from "../src/index.js";

/**
 * The kernel tests' shared setup: kernels started through `startKernel` are shut down after each
 * test, whatever it asserted.
 *
 * The same tests check both kernel providers: in the vitest project "kernel-on-jupyter-server"
 * (`PRIME_KERNEL_TEST_PROVIDER=jupyter-server`) every kernel started here runs on that project's
 * loopback Jupyter Server. A test about local processes skips itself there with `it.skipIf(remote)`
 * and says why.
 */
export const remote = process.env.PRIME_KERNEL_TEST_PROVIDER === "jupyter-server";

/** The conformance project's Jupyter Server; only inside that project. */
export function testServer(): { url: string; token: string; root: string } {
	if (!remote) throw new Error("no Jupyter Server in this project (PRIME_KERNEL_TEST_PROVIDER is not jupyter-server)");
	return inject("jupyterServer");
}

/**
 * `options`, with the kernel on the test Jupyter Server when the tests check that provider (what
 * `options.jupyterServer` sets besides, such as `hostGoneAfterMs`, is kept).
 */
export function kernelOptions(options: KernelStartOptions = {}): KernelStartOptions {
	if (!remote) return options;
	const { url, token } = testServer();
	return { ...options, jupyterServer: { ...options.jupyterServer, url, token } };
}

const started: Kernel[] = [];

afterEach(async () => {
	await Promise.all(started.splice(0).map((kernel) => kernel.shutdown()));
});

export async function startKernel(options: KernelStartOptions = {}): Promise<Kernel> {
	const kernel = await Kernel.start(kernelOptions(options));
	started.push(kernel);
	return kernel;
}

/** A kernel shared by the tests of one file: started before them, shut down after them. */
export function sharedKernel(options: KernelStartOptions | (() => KernelStartOptions) = {}): () => Kernel {
	let kernel: Kernel | undefined;
	beforeAll(async () => {
		kernel = await Kernel.start(kernelOptions(typeof options === "function" ? options() : options));
	});
	afterAll(async () => {
		await kernel?.shutdown();
	});
	return () => {
		if (!kernel) throw new Error("the shared kernel is not started yet (use it inside a test)");
		return kernel;
	};
}

/** A temp folder for the tests of one file, removed after them. */
export function scratchDir(prefix: string): () => string {
	let dir: string | undefined;
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), prefix));
	});
	afterAll(async () => {
		if (dir) await rm(dir, { recursive: true, force: true });
	});
	return () => {
		if (!dir) throw new Error("the scratch folder is not made yet (use it inside a test)");
		return dir;
	};
}

/**
 * Runs `code` and resolves `started` once the cell has printed `marker` (so a test can act on a
 * cell that is really running, without guessing with a sleep); `result` is the cell's result.
 */
export function runUntilPrinted(
	kernel: Kernel,
	code: string,
	marker: string,
	options: ExecuteOptions = {},
): { started: Promise<void>; result: Promise<CellResult> } {
	let seen = "";
	let markStarted = () => {};
	const started = new Promise<void>((resolve) => {
		markStarted = resolve;
	});
	const result = kernel.execute(code, {
		...options,
		onStream: (chunk) => {
			options.onStream?.(chunk);
			if (seen.length < 4096) seen += chunk.text;
			if (seen.includes(marker)) markStarted();
		},
	});
	void result.then(() => markStarted());
	return { started, result };
}

/**
 * The whole text a complete output holds: itself, or for a kernel on a server (which keeps the
 * whole of what it cut on its machine) the file its last line names, read here as the server is
 * on loopback.
 */
export function wholeText(complete: string): string {
	if (!remote) return complete;
	const named = /\n\[\.\.\. the whole text is in (\S+) on the kernel's machine \.\.\.\]$/.exec(complete);
	expect(named).not.toBeNull();
	return readFileSync(named?.[1] as string, "utf8");
}
