#!/usr/bin/env node
/**
 * `npm run bench:kernel`: kernel cold start (median of 5), trivial cell round trip (p50/p95 of 200),
 * a 50 MB print (throughput and the host's peak RSS), interrupt latency of an awaiting cell and
 * of a busy CPU cell (p50/p95 of 20 each), and a 100 MB print during which the host process is
 * stopped (SIGSTOP) for 15 s (bytes kept), and the peak memory (VmHWM) of the host and of the kernel
 * for a 100 MB traceback, a 100 MB display and a 100 MB print (each in a fresh host process and
 * kernel, since a high-water mark never goes down), with the kernel's memory after the print.
 * Prints figures; asserts nothing. `--memory` runs only the memory part.
 *
 * `--provider jupyter-server` instead puts a local kernel and a kernel on a Jupyter Server side by
 * side (see `bench/side-by-side.ts`): its own loopback server, or `--kernel-url <url>` with the
 * token in JUPYTER_TOKEN; `--rate-limits` keeps the loopback server's default iopub rate limits.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FAN_OUT_CHILD, fanOutChild } from "./bench/fan-out.js";
import {
	AWAITING_CELL,
	BUSY_CELL,
	bigPrint,
	coldStart,
	interruptLatency,
	ms,
	percentile,
	roundTrips,
} from "./bench/measures.js";
import { sideBySide } from "./bench/side-by-side.js";
import { Kernel } from "./index.js";

const PAUSED_PRINT_CHILD = "--paused-print-child";
const PAUSED_PRINT_MB = 100;
const PAUSE_MS = 15_000;
const MEMORY_CHILD = "--memory-child";
const MEMORY_MB = 100;

/** Cells of the memory part: each makes about MEMORY_MB MB of one kind of output. */
const MEMORY_CELLS: Record<string, string> = {
	traceback: `raise ValueError('E' * ${MEMORY_MB}_000_000)`,
	display: `from IPython.display import display\ndisplay({'text/plain': 'x' * ${MEMORY_MB}_000_000}, raw=True)\nprint('after')`,
	// A new string each time, as a real program prints (one string printed 100 times is held once).
	print: `import sys\nfor i in range(${MEMORY_MB}): sys.stdout.write((f'{i:07d}' + 'x' * 1016 + '\\n') * 1024)`,
};

/** In a child host: prints a 100 MB output and reports it; the parent stops this process meanwhile. */
async function pausedPrintChild(): Promise<void> {
	const kernel = await Kernel.start();
	let first = true;
	const started = performance.now();
	const result = await kernel.execute(
		`import sys\nchunk = ('x' * 1023 + '\\n') * 1024\nfor _ in range(${PAUSED_PRINT_MB}): sys.stdout.write(chunk)`,
		{
			onStream: () => {
				if (first) process.stdout.write("first output\n");
				first = false;
			},
		},
	);
	const seconds = (performance.now() - started) / 1000;
	const { status, fullOutputBytes, lostOutputChars } = result;
	process.stdout.write(`${JSON.stringify({ status, fullOutputBytes, lostOutputChars, seconds })}\n`);
	await kernel.shutdown();
}

/** Runs `pausedPrintChild` in a child process and stops it for PAUSE_MS once its print has begun. */
function pausedPrint(): Promise<{
	status: string;
	fullOutputBytes: number;
	lostOutputChars?: number;
	seconds: number;
}> {
	const child = spawn(process.execPath, [fileURLToPath(import.meta.url), PAUSED_PRINT_CHILD], {
		stdio: ["ignore", "pipe", "inherit"],
	});
	return new Promise((resolve, reject) => {
		let out = "";
		let paused = false;
		child.stdout.on("data", (chunk: Buffer) => {
			out += chunk.toString();
			if (out.includes("first output\n") && !paused) {
				paused = true;
				child.kill("SIGSTOP");
				setTimeout(() => child.kill("SIGCONT"), PAUSE_MS);
			}
			const line = out.split("\n").find((text) => text.startsWith("{"));
			if (line) resolve(JSON.parse(line));
		});
		child.once("close", (code) => reject(new Error(`the paused host exited (${code}) before reporting`)));
	});
}

/** A `/proc/<pid>/status` field in MiB (Linux), or NaN where there is none. */
function procMiB(pid: number | "self", field: "VmHWM" | "VmRSS"): number {
	try {
		const status = readFileSync(`/proc/${pid}/status`, "utf8");
		return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024;
	} catch {
		return Number.NaN;
	}
}

/** In a child host: runs one MEMORY_CELLS cell in a fresh kernel and reports both processes' memory. */
async function memoryChild(kind: string): Promise<void> {
	const kernel = await Kernel.start();
	const pid = kernel.pid as number;
	const before = { host: procMiB("self", "VmHWM"), kernel: procMiB(pid, "VmHWM") };
	const started = performance.now();
	const cell = await kernel.execute(MEMORY_CELLS[kind]);
	const seconds = (performance.now() - started) / 1000;
	const report = {
		kind,
		seconds,
		status: cell.status,
		before,
		hostPeak: procMiB("self", "VmHWM"),
		kernelPeak: procMiB(pid, "VmHWM"),
		kernelAfter: procMiB(pid, "VmRSS"),
		stdout: cell.stdout.length,
		error: (cell.error?.evalue.length ?? 0) + (cell.error?.traceback.join("\n").length ?? 0),
		displays: cell.displays.map((display) => JSON.stringify(display.data).length),
		fullOutputBytes: cell.fullOutputBytes,
	};
	process.stdout.write(`${JSON.stringify(report)}\n`);
	await kernel.shutdown();
}

async function memory(): Promise<void> {
	for (const kind of Object.keys(MEMORY_CELLS)) {
		const child = spawn(process.execPath, [fileURLToPath(import.meta.url), MEMORY_CHILD, kind], {
			stdio: ["ignore", "pipe", "inherit"],
		});
		let out = "";
		child.stdout.on("data", (chunk: Buffer) => {
			out += chunk.toString();
		});
		await new Promise((resolve) => child.once("close", resolve));
		const line = out.split("\n").find((text) => text.startsWith("{"));
		if (!line) {
			console.log(`${MEMORY_MB} MB ${kind}: the child host reported nothing`);
			continue;
		}
		const r = JSON.parse(line);
		const mib = (n: number) => `${n.toFixed(0)} MiB`;
		const shown = `shown: ${r.stdout} chars of stdout, ${r.error} of error, displays ${JSON.stringify(r.displays)}`;
		console.log(
			`${MEMORY_MB} MB ${kind}: ${r.seconds.toFixed(1)} s, ${r.status}; peak host ${mib(r.hostPeak)} (${mib(r.before.host)} before), ` +
				`kernel ${mib(r.kernelPeak)} (${mib(r.before.kernel)} before), kernel ${mib(r.kernelAfter)} after; ${shown}; ` +
				`complete output ${r.fullOutputBytes} bytes`,
		);
	}
}

async function main(): Promise<void> {
	if (process.argv.includes("--memory")) {
		await memory();
		return;
	}
	const outputDir = await mkdtemp(join(tmpdir(), "prime-kernel-bench-"));
	try {
		const starts = await coldStart({}, 5);
		console.log(
			`cold start to ready: median ${ms(percentile(starts, 50))} (min ${ms(starts[0])}, max ${ms(starts[starts.length - 1])}, 5 runs)`,
		);

		const kernel = await Kernel.start({ outputDir });
		try {
			const trips = await roundTrips(kernel, 200);
			console.log(
				`trivial cell round trip: p50 ${ms(percentile(trips, 50))}, p95 ${ms(percentile(trips, 95))} (200 cells)`,
			);

			const print = await bigPrint(kernel, 50);
			if (print.fullBytes !== print.expectedBytes) {
				throw new Error(`expected ${print.expectedBytes} bytes of output, got ${print.fullBytes}`);
			}
			console.log(
				`50 MB print: ${print.seconds.toFixed(2)} s, ${(print.fullBytes / 1e6 / print.seconds).toFixed(1)} MB/s; host RSS ${print.rssBeforeMiB.toFixed(0)} MiB before, peak ${print.rssPeakMiB.toFixed(0)} MiB during`,
			);

			const awaiting = await interruptLatency(kernel, AWAITING_CELL, 20);
			console.log(
				`interrupt of an awaiting cell: p50 ${ms(percentile(awaiting, 50))}, p95 ${ms(percentile(awaiting, 95))} (20 cells)`,
			);
			const busy = await interruptLatency(kernel, BUSY_CELL, 20);
			console.log(
				`interrupt of a busy CPU cell: p50 ${ms(percentile(busy, 50))}, p95 ${ms(percentile(busy, 95))} (20 cells)`,
			);
		} finally {
			await kernel.shutdown();
		}

		const paused = await pausedPrint();
		const expected = PAUSED_PRINT_MB * 1024 * 1024;
		const kept = ((paused.fullOutputBytes / expected) * 100).toFixed(paused.fullOutputBytes === expected ? 0 : 2);
		const working = paused.seconds - PAUSE_MS / 1000;
		console.log(
			`${PAUSED_PRINT_MB} MB print with the host stopped ${PAUSE_MS / 1000} s mid-print: ${kept}% of bytes kept ` +
				`(${paused.fullOutputBytes} of ${expected}${paused.lostOutputChars ? `, ${paused.lostOutputChars} reported lost` : ""}), ` +
				`${paused.seconds.toFixed(1)} s in all, ${(expected / 1e6 / working).toFixed(1)} MB/s outside the pause, status ${paused.status}`,
		);
		await memory();
	} finally {
		await rm(outputDir, { recursive: true, force: true });
	}
}

/** The value after `flag` on the command line, if the flag is there. */
function argument(flag: string): string | undefined {
	const at = process.argv.indexOf(flag);
	return at > 0 ? process.argv[at + 1] : undefined;
}

const provider = argument("--provider") ?? "local";
if (process.argv.includes(PAUSED_PRINT_CHILD)) await pausedPrintChild();
else if (argument(MEMORY_CHILD)) await memoryChild(argument(MEMORY_CHILD) as string);
else if (argument(FAN_OUT_CHILD)) await fanOutChild(argument(FAN_OUT_CHILD) as string);
else if (provider === "jupyter-server") {
	await sideBySide({ kernelUrl: argument("--kernel-url"), rateLimits: process.argv.includes("--rate-limits") });
} else if (provider === "local") await main();
else {
	console.error(`Unknown --provider ${provider}: use local (the default) or jupyter-server.`);
	process.exitCode = 2;
}
