/**
 * The kernel benchmark's measures, for any kernel (local or on a Jupyter Server): each takes a
 * started kernel, or a way to start one, and returns figures; none asserts anything.
 */
import { Kernel } from "../index.js";
import type { KernelStartOptions } from "../types.js";

export function percentile(sorted: number[], p: number): number {
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Start-to-ready times of `runs` kernels started one after another, sorted. */
export async function coldStart(options: KernelStartOptions, runs: number): Promise<number[]> {
	const times: number[] = [];
	for (let i = 0; i < runs; i++) {
		const started = performance.now();
		const kernel = await Kernel.start(options);
		times.push(performance.now() - started);
		await kernel.shutdown();
	}
	return times.sort((a, b) => a - b);
}

/** Times of `cells` trivial cells after 10 to warm up, sorted. */
export async function roundTrips(kernel: Kernel, cells: number): Promise<number[]> {
	for (let i = 0; i < 10; i++) await kernel.execute("pass");
	const times: number[] = [];
	for (let i = 0; i < cells; i++) {
		const started = performance.now();
		await kernel.execute("x = 1");
		times.push(performance.now() - started);
	}
	return times.sort((a, b) => a - b);
}

export interface BigPrint {
	seconds: number;
	/** Bytes the cell printed (`megabytes` MiB). */
	expectedBytes: number;
	/** Bytes of it the host received and kept. */
	fullBytes: number;
	lostOutputChars?: number;
	/** The Jupyter Server replaced output with its "IOPub data rate exceeded" notice. */
	rateLimited: boolean;
	/** The host's resident memory before and at its peak during the print (MiB). */
	rssBeforeMiB: number;
	rssPeakMiB: number;
}

/** A `megabytes` MiB print of 1 KiB lines, its time and the host's memory meanwhile. */
export async function bigPrint(kernel: Kernel, megabytes: number): Promise<BigPrint> {
	const code = `import sys\nchunk = ('x' * 1023 + '\\n') * 1024\nfor _ in range(${megabytes}): sys.stdout.write(chunk)`;
	const rssBefore = process.memoryUsage().rss;
	let peakRss = rssBefore;
	const sampler = setInterval(() => {
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
	}, 10);
	const started = performance.now();
	const result = await kernel.execute(code).finally(() => clearInterval(sampler));
	const seconds = (performance.now() - started) / 1000;
	peakRss = Math.max(peakRss, process.memoryUsage().rss);
	return {
		seconds,
		expectedBytes: megabytes * 1024 * 1024,
		fullBytes: result.fullOutputBytes,
		lostOutputChars: result.lostOutputChars,
		rateLimited: /IOPub (data|message) rate exceeded/.test(result.stderr),
		rssBeforeMiB: rssBefore / 2 ** 20,
		rssPeakMiB: peakRss / 2 ** 20,
	};
}

/** Time from `interrupt()` to the cell's result, for `runs` cells that print a line and then run `body`. */
export async function interruptLatency(kernel: Kernel, body: string, runs: number): Promise<number[]> {
	const times: number[] = [];
	for (let i = 0; i < runs; i++) {
		let started = 0;
		let interrupted: Promise<unknown> = Promise.resolve();
		const result = kernel.execute(`print('running', flush=True)\n${body}`, {
			onStream: () => {
				if (started) return;
				started = performance.now();
				interrupted = kernel.interrupt();
			},
		});
		const cell = await result;
		times.push(performance.now() - started);
		await interrupted;
		if (cell.status !== "aborted") throw new Error(`an interrupted cell ended ${cell.status}, not aborted`);
	}
	return times.sort((a, b) => a - b);
}

export const AWAITING_CELL = "import asyncio\nawait asyncio.sleep(60)";
export const BUSY_CELL = "while True: pass";
