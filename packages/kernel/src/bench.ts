#!/usr/bin/env node
/**
 * `npm run bench:kernel`: kernel cold start (median of 5), trivial cell round trip (p50/p95 of 200),
 * and a 50 MB print (throughput and the host's peak RSS). Prints figures; asserts nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kernel } from "./index.js";

function percentile(sorted: number[], p: number): number {
	return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

async function coldStart(runs: number): Promise<number[]> {
	const times: number[] = [];
	for (let i = 0; i < runs; i++) {
		const started = performance.now();
		const kernel = await Kernel.start();
		times.push(performance.now() - started);
		await kernel.shutdown();
	}
	return times.sort((a, b) => a - b);
}

async function roundTrips(kernel: Kernel, cells: number): Promise<number[]> {
	for (let i = 0; i < 10; i++) await kernel.execute("pass"); // warm up
	const times: number[] = [];
	for (let i = 0; i < cells; i++) {
		const started = performance.now();
		await kernel.execute("x = 1");
		times.push(performance.now() - started);
	}
	return times.sort((a, b) => a - b);
}

async function bigPrint(kernel: Kernel, megabytes: number): Promise<{ seconds: number; fullBytes: number }> {
	const code = `import sys\nchunk = ('x' * 1023 + '\\n') * 1024\nfor _ in range(${megabytes}): sys.stdout.write(chunk)`;
	const started = performance.now();
	const result = await kernel.execute(code);
	const seconds = (performance.now() - started) / 1000;
	if (result.fullOutputBytes !== megabytes * 1024 * 1024) {
		throw new Error(`expected ${megabytes} MiB of output, got ${result.fullOutputBytes} bytes`);
	}
	return { seconds, fullBytes: result.fullOutputBytes };
}

const outputDir = await mkdtemp(join(tmpdir(), "prime-kernel-bench-"));
try {
	const starts = await coldStart(5);
	console.log(
		`cold start to ready: median ${ms(percentile(starts, 50))} (min ${ms(starts[0])}, max ${ms(starts[starts.length - 1])}, 5 runs)`,
	);

	const kernel = await Kernel.start({ outputDir });
	try {
		const trips = await roundTrips(kernel, 200);
		console.log(
			`trivial cell round trip: p50 ${ms(percentile(trips, 50))}, p95 ${ms(percentile(trips, 95))} (200 cells)`,
		);

		const rssBefore = process.memoryUsage().rss;
		let peakRss = rssBefore;
		const sampler = setInterval(() => {
			peakRss = Math.max(peakRss, process.memoryUsage().rss);
		}, 10);
		const { seconds, fullBytes } = await bigPrint(kernel, 50);
		clearInterval(sampler);
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
		const mb = fullBytes / 1e6;
		console.log(
			`50 MB print: ${seconds.toFixed(2)} s, ${(mb / seconds).toFixed(1)} MB/s; host RSS ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, peak ${(peakRss / 2 ** 20).toFixed(0)} MiB during`,
		);
	} finally {
		await kernel.shutdown();
	}
} finally {
	await rm(outputDir, { recursive: true, force: true });
}
