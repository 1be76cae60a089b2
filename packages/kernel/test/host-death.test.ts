import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { processGone, waitUntilGone } from "prime-agent-test-support/process-gone";
import { afterEach, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

/** The connection file a running kernel was started with (from its command line). */
function connectionFileOf(pid: number): string {
	const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
	return args[args.indexOf("-f") + 1];
}

/** CPU time (user + system) process `pid` has used, in seconds (clock ticks are 1/100 s on Linux). */
function cpuSeconds(pid: number): number {
	const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop()?.trim().split(" ") ?? [];
	return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Polls until `path` no longer exists; rejects after `timeoutMs`. */
async function waitUntilRemoved(path: string, timeoutMs: number): Promise<void> {
	const started = Date.now();
	while (existsSync(path)) {
		if (Date.now() - started > timeoutMs) throw new Error(`${path} still exists after ${timeoutMs} ms`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
}

describe("a kernel never outlives its host", () => {
	// A test that failed half-way must not leave its host (and so its kernel) running.
	const hosts: ChildProcess[] = [];
	afterEach(() => {
		for (const host of hosts.splice(0)) host.kill("SIGKILL");
	});

	const hostScript = join(here, "host-process.mjs");

	interface Host {
		hostPid: number;
		kernelPid: number;
		exited: Promise<NodeJS.Signals | null>;
		nextLine: () => Promise<string>;
	}

	async function startHost(args: string[] = []): Promise<Host> {
		if (!existsSync(join(here, "..", "dist", "index.js"))) {
			throw new Error("the host script runs the built package: build first with `npx tsc -b packages/kernel`");
		}
		const child = spawn(process.execPath, [hostScript, ...args], { stdio: ["ignore", "pipe", "inherit"] });
		hosts.push(child);
		const exited = new Promise<NodeJS.Signals | null>((resolve) =>
			child.once("exit", (_code, signal) => resolve(signal)),
		);
		const lines: string[] = [];
		let wake = () => {};
		let out = "";
		child.stdout.on("data", (chunk: Buffer) => {
			out += chunk.toString();
			const parts = out.split("\n");
			out = parts.pop() ?? "";
			lines.push(...parts);
			wake();
		});
		const nextLine = async (): Promise<string> => {
			while (lines.length === 0) {
				if (child.exitCode !== null || child.signalCode !== null) throw new Error("the host exited early");
				await new Promise<void>((resolve) => {
					wake = resolve;
					setTimeout(resolve, 100);
				});
			}
			return lines.shift() as string;
		};
		const first = await nextLine();
		return { hostPid: child.pid as number, kernelPid: JSON.parse(first).kernelPid, exited, nextLine };
	}

	it("exits within 10 s after its host is killed with SIGKILL, removing its connection file", async () => {
		const host = await startHost();
		expect(processGone(host.kernelPid)).toBe(false);
		const connectionFile = connectionFileOf(host.kernelPid);
		process.kill(host.hostPid, "SIGKILL");
		await host.exited;
		await waitUntilGone(host.kernelPid, 10_000);
		// The kernel's guard removes it (within its poll interval), whoever killed the kernel first.
		await waitUntilRemoved(connectionFile, 2_000);
	});

	it("is gone within 2 s of a SIGKILL of its host while a C call holds the GIL, with its subprocesses", async () => {
		// The C call starts only once the host has the child's pid (it holds the GIL, so the kernel
		// could send nothing after it): the cell waits for a file the test writes then, and the test
		// knows the call runs once the kernel has burnt half a second of CPU (waiting burns none).
		const go = join(mkdtempSync(join(tmpdir(), "kernel-gil-")), "go");
		const host = await startHost([
			"--cell",
			`import os, subprocess, time\nchild = subprocess.Popen(['sleep', '300'])\nprint(child.pid, flush=True)\nwhile not os.path.exists(${JSON.stringify(go)}): time.sleep(0.01)\nsum(range(10**12))`,
		]);
		const sleeperPid = Number(JSON.parse(await host.nextLine()).printed);
		const cpuBefore = cpuSeconds(host.kernelPid);
		writeFileSync(go, "");
		while (cpuSeconds(host.kernelPid) - cpuBefore < 0.5) await new Promise((resolve) => setTimeout(resolve, 50));
		process.kill(host.hostPid, "SIGKILL");
		await host.exited;
		await waitUntilGone(host.kernelPid, 2_000);
		await waitUntilGone(sleeperPid, 2_000);
	});

	it("is gone within 2 s of a SIGKILL of its host during its shutdown, with its subprocesses and its connection file", async () => {
		// ipykernel's shutdown terminates the processes of the kernel's group and waits (up to 30 s)
		// for them to go. A subprocess that records the SIGTERM, and ignores it, shows the kernel is
		// inside that wait: the host is killed then.
		const marker = join(mkdtempSync(join(tmpdir(), "kernel-shutdown-")), "terminated");
		const host = await startHost([
			"--then-shutdown",
			"--cell",
			`import subprocess\nchild = subprocess.Popen(['sh', '-c', "trap 'echo term >> ${marker}' TERM; while :; do sleep 0.1; done"])\nprint(child.pid, flush=True)`,
		]);
		const subprocessPid = Number(JSON.parse(await host.nextLine()).printed);
		const connectionFile = connectionFileOf(host.kernelPid);
		try {
			expect(await host.nextLine()).toBe("shutting down");
			while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 20));
			const killed = Date.now();
			process.kill(host.hostPid, "SIGKILL");
			await host.exited;
			await waitUntilGone(host.kernelPid, 10_000);
			await waitUntilGone(subprocessPid, 10_000);
			expect(Date.now() - killed).toBeLessThan(2_000);
			// Removed by the kernel's guard, which the shutdown did not take down.
			await waitUntilRemoved(connectionFile, 2_000);
		} finally {
			for (const pid of [host.kernelPid, subprocessPid]) {
				try {
					process.kill(pid, "SIGKILL");
				} catch {
					// Gone, as it should be.
				}
			}
			rmSync(dirname(marker), { recursive: true, force: true });
			rmSync(dirname(connectionFile), { recursive: true, force: true });
		}
	});

	it("survives a SIGINT the host app handles itself, and still dies with the host afterwards", async () => {
		const host = await startHost(["--own-sigint"]);
		process.kill(host.hostPid, "SIGINT");
		expect(await host.nextLine()).toBe("sigint handled");
		expect(processGone(host.kernelPid)).toBe(false);
		process.kill(host.hostPid, "SIGKILL");
		await waitUntilGone(host.kernelPid, 10_000);
	});

	it("is killed when its host gets SIGTERM, and the host still dies of SIGTERM", async () => {
		const host = await startHost();
		const connectionFile = connectionFileOf(host.kernelPid);
		process.kill(host.hostPid, "SIGTERM");
		expect(await host.exited).toBe("SIGTERM");
		await waitUntilGone(host.kernelPid, 2_000);
		expect(existsSync(dirname(connectionFile))).toBe(false);
	});
});
