import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { processGone, waitUntilGone } from "prime-agent-test-support/process-gone";
import { describe, expect, it } from "vitest";
import { Kernel, KernelNotRunningError } from "../src/index.js";
import { kernelOptions, remote, runUntilPrinted, startKernel, testServer } from "./kernels.js";

/** Kernel processes (not their guards) whose parent is this test process. */
function kernelProcessesOfThisHost(): number[] {
	const pids: number[] = [];
	for (const entry of readdirSync("/proc")) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
			const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
			if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("prime_kernel")) {
				pids.push(Number(entry));
			}
		} catch {
			// Exited while listing.
		}
	}
	return pids;
}

/** TCP sockets in LISTEN state that process `pid` holds (from /proc: its socket inodes). */
function listeningTcpSockets(pid: number): string[] {
	const inodes = new Set<string>();
	for (const fd of readdirSync(`/proc/${pid}/fd`)) {
		try {
			const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
			if (match) inodes.add(match[1]);
		} catch {
			// Closed while listing.
		}
	}
	const listening: string[] = [];
	for (const table of ["tcp", "tcp6"]) {
		for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
			const fields = line.trim().split(/\s+/);
			if (fields[3] === "0A" && inodes.has(fields[9])) listening.push(`${table} ${fields[1]}`);
		}
	}
	return listening;
}

/** Ids of the kernels the test Jupyter Server runs now. */
async function serverKernelIds(): Promise<string[]> {
	const { url, token } = testServer();
	const listed = await fetch(`${url}/api/kernels`, { headers: { Authorization: `token ${token}` } });
	return ((await listed.json()) as Array<{ id: string }>).map((kernel) => kernel.id);
}

function kernelId(kernel: Kernel): string {
	const location = kernel.location;
	return location.kind === "jupyter-server" ? location.kernelId : "";
}

/** What a cell reports when a kernel on the test server crashed (the server replaces it with an empty one: deleted). */
function serverCrash(): string {
	return `died on the server ${testServer().url} (the server put an empty kernel in its place, which was deleted)`;
}

describe("kernel process", () => {
	// Local processes: connection files, sockets, environment, process groups (a kernel on a server has none of these here).
	it.skipIf(remote)(
		"connects through a connection file only the user can read, over Unix sockets in that private folder",
		async () => {
			const kernel = await startKernel();
			const args = readFileSync(`/proc/${kernel.pid}/cmdline`, "utf8").split("\0");
			const file = args[args.indexOf("-f") + 1];
			expect(statSync(file).mode & 0o777).toBe(0o600);
			expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
			const info = JSON.parse(readFileSync(file, "utf8"));
			expect(info.transport).toBe("ipc");
			expect(info.ip).toBe(join(dirname(file), "k"));
			expect(info.key).toMatch(/^[0-9a-f]{64}$/);
			expect(statSync(`${info.ip}-${info.iopub_port}`).isSocket()).toBe(true);
			expect(listeningTcpSockets(kernel.pid as number)).toEqual([]);
		},
	);

	it.skipIf(remote)(
		"starts from baseEnv instead of the host's environment when one is given, with env set over it",
		async () => {
			expect(process.env.HOME).toBeDefined();
			const kernel = await startKernel({
				baseEnv: { PATH: process.env.PATH ?? "", FROM_BASE: "b" },
				env: { FROM_ENV: "e" },
			});
			const run = await kernel.execute(
				"import os\nprint(sorted((k, os.environ[k]) for k in ('FROM_BASE', 'FROM_ENV', 'HOME') if k in os.environ))",
			);
			expect(run.stdout).toBe("[('FROM_BASE', 'b'), ('FROM_ENV', 'e')]\n");
		},
	);

	it.skipIf(remote)("lets no other user connect to the kernel's sockets", async ({ skip }) => {
		if (process.getuid?.() !== 0) skip("needs root to run a probe as another user");
		const kernel = await startKernel();
		const args = readFileSync(`/proc/${kernel.pid}/cmdline`, "utf8").split("\0");
		const info = JSON.parse(readFileSync(args[args.indexOf("-f") + 1], "utf8"));
		const probe = spawnSync(
			process.execPath,
			[
				"-e",
				"require('net').connect(process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })",
				`${info.ip}-${info.iopub_port}`,
			],
			{ uid: 65534, gid: 65534, encoding: "utf8" },
		);
		expect(probe.stdout.trim()).toBe("EACCES");
	});

	it("fails a cell whose kernel exits mid-cell, refuses further cells, and works again after restart", async () => {
		const kernel = await startKernel({ startupCode: "booted = 'yes'" });
		const deaths: Array<{ code: number | null }> = [];
		kernel.on("died", (info) => deaths.push(info));
		await kernel.execute("doomed = 1");
		const result = await kernel.execute("import os\nprint('before', flush=True)\nos._exit(1)");
		expect(result.status).toBe("died");
		expect(result.error?.evalue).toContain(remote ? serverCrash() : "exited with code 1");
		expect(result.error?.evalue).toContain("variable");
		// The cell's text names no host call (a model reading it cannot make one); the next call's error does.
		expect(result.error?.evalue).not.toContain("restart");
		expect(kernel.alive).toBe(false);
		expect(deaths).toEqual([remote ? { code: null, signal: null, reason: serverCrash() } : { code: 1, signal: null }]);
		await expect(kernel.execute("1")).rejects.toThrow(KernelNotRunningError);
		await expect(kernel.execute("1")).rejects.toThrow(/restart\(\)/);

		await kernel.restart();
		expect(kernel.alive).toBe(true);
		expect((await kernel.execute("booted")).result).toBe("'yes'");
		const gone = await kernel.execute("doomed");
		expect(gone.error?.ename).toBe("NameError");
	});

	it.skipIf(remote)("takes the subprocesses of a kernel that crashed down with it", async () => {
		const kernel = await startKernel();
		const started = await kernel.execute(
			"import subprocess\nsleeper = subprocess.Popen(['sleep', '300'])\nsleeper.pid",
		);
		const sleeperPid = Number(started.result);
		expect(processGone(sleeperPid)).toBe(false);
		const result = await kernel.execute("import os\nos._exit(3)");
		expect(result.status).toBe("died");
		await waitUntilGone(sleeperPid, 2_000);
	});

	it.skipIf(!remote)("leaks no kernel on the server when restart() is called twice at once", async () => {
		const kernel = await startKernel();
		const ids = [kernelId(kernel)];
		await kernel.execute("first = 1");
		const restart = () => kernel.restart().then(() => ids.push(kernelId(kernel)));
		await Promise.all([restart(), restart()]);
		expect((await kernel.execute("'fresh'")).result).toBe("'fresh'");
		expect(new Set(ids).size).toBe(3);
		const running = await serverKernelIds();
		expect(ids.map((id) => running.includes(id))).toEqual([false, false, true]);
		await kernel.shutdown();
		expect((await serverKernelIds()).filter((id) => ids.includes(id))).toEqual([]);
	});

	it.skipIf(remote)("leaks no kernel when restart() is called twice at once", async () => {
		const before = kernelProcessesOfThisHost();
		const kernel = await startKernel();
		await kernel.execute("first = 1");
		await Promise.all([kernel.restart(), kernel.restart()]);
		expect((await kernel.execute("'fresh'")).result).toBe("'fresh'");
		expect(kernelProcessesOfThisHost().filter((pid) => !before.includes(pid))).toEqual([kernel.pid]);
		await kernel.shutdown();
		expect(kernelProcessesOfThisHost().filter((pid) => !before.includes(pid) && !processGone(pid))).toEqual([]);
	});

	it.skipIf(remote)("has removed its connection folder, key and sockets, when shutdown() resolves", async () => {
		const kernel = await startKernel();
		const args = readFileSync(`/proc/${kernel.pid}/cmdline`, "utf8").split("\0");
		const folder = dirname(args[args.indexOf("-f") + 1]);
		await kernel.shutdown();
		expect(existsSync(folder)).toBe(false);
	});

	it("says a cell was ended by shutdown(), without advising a restart", async () => {
		const kernel = await startKernel();
		const cell = runUntilPrinted(kernel, "import time\nprint('running', flush=True)\ntime.sleep(30)", "running");
		await cell.started;
		await kernel.shutdown();
		const result = await cell.result;
		expect(result.status).toBe("died");
		expect(result.error?.evalue).toBe("The kernel was shut down while this cell was running; its variables are gone.");
	});

	it("reports a segfault mid-cell with the signal that killed the kernel", async () => {
		const kernel = await startKernel();
		const result = await kernel.execute("import ctypes\nctypes.string_at(0)");
		expect(result.status).toBe("died");
		// A server tells no signal: that it died, and that its variables are gone.
		expect(result.error?.evalue).toContain(remote ? serverCrash() : "SIGSEGV");
		await kernel.restart();
		expect((await kernel.execute("1 + 1")).result).toBe("2");
	});

	it("reports a cell that stays busy after an interrupt, and recovers with kill and restart", async () => {
		const kernel = await startKernel({ stillBusyAfterMs: 1_000 });
		const cell = runUntilPrinted(
			kernel,
			"import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('deaf', flush=True)\ntime.sleep(60)",
			"deaf",
		);
		await cell.started;
		const interrupted = await kernel.interrupt();
		expect(interrupted.stillBusy).toBe(true);
		const result = await cell.result;
		expect(result.status).toBe("aborted");
		expect(result.stillBusyAfterInterrupt).toBe(true);
		const pid = kernel.pid as number;
		const id = kernelId(kernel);
		kernel.kill();
		if (remote) await expect.poll(serverKernelIds, { timeout: 10_000 }).not.toContain(id);
		else await waitUntilGone(pid, 10_000);
		await kernel.restart();
		expect((await kernel.execute("'back'")).result).toBe("'back'");
	});

	it("falls back to SIGINT when the control channel does not answer an interrupt", async () => {
		const kernel = await startKernel();
		// Make the kernel's control thread sit on interrupt requests instead of answering them.
		await kernel.execute(
			"import time\nget_ipython().kernel.control_handlers['interrupt_request'] = lambda *args: time.sleep(3)",
		);
		await kernel.execute("kept = 'yes'");
		const cell = runUntilPrinted(kernel, "print('spinning', flush=True)\nwhile True: pass", "spinning");
		await cell.started;
		expect(await kernel.interrupt()).toEqual({ stillBusy: false });
		const result = await cell.result;
		expect(result.status).toBe("aborted");
		expect(result.error?.ename).toBe("KeyboardInterrupt");
		expect((await kernel.execute("kept")).result).toBe("'yes'");
	});

	it("refuses to start when the startup code raises, naming the error", async () => {
		await expect(Kernel.start(kernelOptions({ startupCode: "raise RuntimeError('bad startup')" }))).rejects.toThrow(
			/startupCode failed \(RuntimeError: bad startup\)/,
		);
	});

	// Local paths as the working directory (a server's is a folder under its root: remote-kernel.test.ts).
	it.skipIf(remote)("names a working directory that does not exist", async () => {
		const missing = join(tmpdir(), "kernel-no-such-cwd", "deeper");
		await expect(Kernel.start({ cwd: missing })).rejects.toThrow(`working directory ${missing} does not exist`);
	});

	it.skipIf(remote)("starts in the given working directory", async () => {
		const dir = await realpath(await mkdtemp(join(tmpdir(), "kernel-cwd-")));
		try {
			const kernel = await startKernel({ cwd: dir });
			expect((await kernel.execute("import os\nos.getcwd()")).result).toBe(`'${dir}'`);
		} finally {
			await rm(dir, { recursive: true, force: true });
		}
	});

	it("puts pythonPath directories on the kernel's import path", async () => {
		const dir = await mkdtemp(join(tmpdir(), "kernel-pythonpath-"));
		try {
			await writeFile(join(dir, "extra_module.py"), "ANSWER = 'from extra'\n");
			const kernel = await startKernel({ pythonPath: [dir] });
			expect((await kernel.execute("import extra_module\nextra_module.ANSWER")).result).toBe("'from extra'");
		} finally {
			await rm(dir, { recursive: true, force: true });
		}
	});

	it("does not run a cell whose signal was aborted before its turn", async () => {
		const kernel = await startKernel();
		const result = await kernel.execute("never_set = 1", { signal: AbortSignal.abort() });
		expect(result.status).toBe("aborted");
		expect((await kernel.execute("'never_set' in globals()")).result).toBe("False");
	});

	it.skipIf(!remote)("is deleted on the server when shutdown() resolves, and refuses cells after", async () => {
		const kernel = await Kernel.start(kernelOptions());
		const id = kernelId(kernel);
		expect(await serverKernelIds()).toContain(id);
		await kernel.shutdown();
		expect(kernel.alive).toBe(false);
		expect(await serverKernelIds()).not.toContain(id);
		await expect(kernel.execute("1")).rejects.toThrow(KernelNotRunningError);
	});

	it.skipIf(remote)("shuts down politely and leaves no process behind", async () => {
		const kernel = await Kernel.start();
		const pid = kernel.pid as number;
		const asked = Date.now();
		await kernel.shutdown();
		// It exited by itself, not killed at the end of the 2 s grace (ipykernel's shutdown used to
		// wait on the kernel's own guard process, which it had terminated).
		expect(Date.now() - asked).toBeLessThan(2_000);
		expect(kernel.alive).toBe(false);
		expect(processGone(pid)).toBe(true);
		await expect(kernel.execute("1")).rejects.toThrow(KernelNotRunningError);
	});
});
