/**
 * The fan-out measure: `FAN_OUT` kernels started at once, each running one cell, as that many
 * sub-agents would. Each fan-out runs in a fresh host process (`fanOutChild`), so the host's
 * memory figures are that fan-out's alone; the kernels' memory is read from /proc (Linux, and only
 * for kernels on this machine) as proportional set size, so pages the kernels share are not
 * counted eight times.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Kernel } from "../index.js";
import type { KernelStartOptions } from "../types.js";

export const FAN_OUT = 8;
export const FAN_OUT_CHILD = "--fan-out-child";
/** The environment a fan-out child on a Jupyter Server reads its server from (the token: JUPYTER_TOKEN). */
const URL_ENV = "PRIME_BENCH_KERNEL_URL";
/** Set when the server is a process of this machine, so its kernels' memory can be read. */
const SERVER_PID_ENV = "PRIME_BENCH_SERVER_PID";

/** As in `side-by-side.ts`: eight kernels starting at once on a loaded machine take a while. */
const READY_TIMEOUT_MS = 120_000;

/** What each sub-agent's first cell does: a little work, and the kernel's process id. */
const CELL = "import os\nsum(range(2_000_000))\nprint(os.getpid())";

export interface FanOut {
	/** From the first start to the last kernel ready. */
	allReadyMs: number;
	/** From the first start to the last cell's result. */
	allDoneMs: number;
	/** The status of each cell that ran (a kernel that did not start runs none). */
	statuses: string[];
	/** Why each kernel that did not start failed. */
	failures: string[];
	host: { beforeMiB: number; peakMiB: number };
	/** The kernel processes' summed PSS, and any other processes the fan-out added (guards, the server's growth). */
	kernels?: { count: number; pssMiB: number; otherLabel: string; otherMiB: number };
}

/** Process id to parent id, for every process in /proc. */
function parents(): Map<number, number> {
	const map = new Map<number, number>();
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const stat = readFileSync(`/proc/${name}/stat`, "utf8");
			// The command name (in parentheses) may hold spaces: the fields after its last `)`.
			const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			map.set(Number(name), Number(fields[1]));
		} catch {} // gone meanwhile
	}
	return map;
}

function descendants(root: number): number[] {
	const map = parents();
	const found: number[] = [];
	const queue = [root];
	while (queue.length) {
		const parent = queue.shift() as number;
		for (const [pid, ppid] of map) {
			if (ppid === parent) {
				found.push(pid);
				queue.push(pid);
			}
		}
	}
	return found;
}

/** A process's proportional set size in MiB (0 when it is gone or unreadable). */
function pssMiB(pid: number): number {
	try {
		const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
		return Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0) / 1024;
	} catch {
		return 0;
	}
}

const sum = (pids: number[]) => pids.reduce((total, pid) => total + pssMiB(pid), 0);

/** In a fresh host process: the fan-out itself; prints its `FanOut` as one JSON line. */
export async function fanOutChild(provider: string): Promise<void> {
	const url = process.env[URL_ENV];
	const serverPid = Number(process.env[SERVER_PID_ENV]) || undefined;
	const options: KernelStartOptions =
		provider === "local"
			? { readyTimeoutMs: READY_TIMEOUT_MS }
			: { jupyterServer: { url: url as string, token: process.env.JUPYTER_TOKEN }, readyTimeoutMs: READY_TIMEOUT_MS };
	const serverBefore = serverPid ? pssMiB(serverPid) : 0;
	const before = process.memoryUsage().rss;
	let peak = before;
	const sampler = setInterval(() => {
		peak = Math.max(peak, process.memoryUsage().rss);
	}, 10);
	const started = performance.now();
	let lastReady = 0;
	const kernels: Kernel[] = [];
	try {
		const failures: string[] = [];
		const settled = await Promise.all(
			Array.from({ length: FAN_OUT }, async () => {
				try {
					const kernel = await Kernel.start(options);
					kernels.push(kernel);
					lastReady = Math.max(lastReady, performance.now());
					return await kernel.execute(CELL);
				} catch (error) {
					failures.push(error instanceof Error ? error.message : String(error));
					return undefined;
				}
			}),
		);
		const cells = settled.filter((cell) => cell !== undefined);
		const allDoneMs = performance.now() - started;
		clearInterval(sampler);
		peak = Math.max(peak, process.memoryUsage().rss);
		const kernelPids = cells.map((cell) => Number(cell.stdout.trim())).filter((pid) => pid > 0);
		const report: FanOut = {
			allReadyMs: lastReady - started,
			allDoneMs,
			statuses: cells.map((cell) => cell.status),
			failures,
			host: { beforeMiB: before / 2 ** 20, peakMiB: peak / 2 ** 20 },
		};
		if (provider === "local") {
			const others = descendants(process.pid).filter((pid) => !kernelPids.includes(pid));
			report.kernels = {
				count: kernelPids.length,
				pssMiB: sum(kernelPids),
				otherLabel: `${others.length} guard processes`,
				otherMiB: sum(others),
			};
		} else if (serverPid) {
			// Only the server's own children: a pid from a cell elsewhere would name another process.
			const children = new Set(descendants(serverPid));
			const onServer = kernelPids.filter((pid) => children.has(pid));
			report.kernels = {
				count: onServer.length,
				pssMiB: sum(onServer),
				otherLabel: "the server's growth",
				otherMiB: pssMiB(serverPid) - serverBefore,
			};
		}
		process.stdout.write(`${JSON.stringify(report)}\n`);
	} finally {
		clearInterval(sampler);
		await Promise.all(kernels.map((kernel) => kernel.shutdown()));
	}
}

/** Runs one fan-out in a fresh host process; `server` names the Jupyter Server, or none for local kernels. */
export function fanOut(server?: { url: string; token: string; pid?: number }): Promise<FanOut> {
	const env: NodeJS.ProcessEnv = { ...process.env };
	if (server) {
		env[URL_ENV] = server.url;
		env.JUPYTER_TOKEN = server.token;
		if (server.pid) env[SERVER_PID_ENV] = String(server.pid);
	}
	const entry = fileURLToPath(new URL("../bench.js", import.meta.url));
	const child = spawn(process.execPath, [entry, FAN_OUT_CHILD, server ? "jupyter-server" : "local"], {
		stdio: ["ignore", "pipe", "inherit"],
		env,
	});
	return new Promise((resolve, reject) => {
		let out = "";
		child.stdout.on("data", (chunk: Buffer) => {
			out += chunk.toString();
		});
		child.once("close", (code) => {
			const line = out.split("\n").find((text) => text.startsWith("{"));
			if (line) resolve(JSON.parse(line));
			else reject(new Error(`the fan-out host exited (${code}) without reporting`));
		});
	});
}
