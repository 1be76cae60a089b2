import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { processGone, waitUntilGone } from "prime-agent-test-support/process-gone";
import { afterEach, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

interface GroupHost {
	child: ChildProcess;
	/** Sends a command ("group", "leader-exits", "quit") and, but for "quit", resolves with the pids it printed. */
	send(line: string): Promise<number[]>;
}

const hosts: ChildProcess[] = [];
/** Every pid a test saw, killed after it whatever it asserted (a failed test leaves nothing running). */
const seen: number[] = [];
afterEach(() => {
	for (const host of hosts.splice(0)) host.kill("SIGKILL");
	for (const pid of seen.splice(0)) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// Gone, as it should be.
		}
	}
});

function startHost(): GroupHost {
	if (!existsSync(join(here, "..", "dist", "index.js"))) {
		throw new Error("the host script runs the built package: build first with `npx tsc -b packages/kernel`");
	}
	const child = spawn(process.execPath, [join(here, "group-host.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
	hosts.push(child);
	const replies: ((pids: number[]) => void)[] = [];
	let out = "";
	child.stdout?.on("data", (chunk: Buffer) => {
		out += chunk.toString();
		const lines = out.split("\n");
		out = lines.pop() ?? "";
		for (const line of lines) {
			const pids = (JSON.parse(line) as { pids: number[] }).pids;
			seen.push(...pids);
			replies.shift()?.(pids);
		}
	});
	return {
		child,
		send: (line) => {
			child.stdin?.write(`${line}\n`);
			return line === "quit" ? Promise.resolve([]) : new Promise((resolve) => replies.push(resolve));
		},
	};
}

/** SIGKILL to the host; resolves once it is dead (and reaped). */
async function killHost(host: GroupHost): Promise<void> {
	const dead = new Promise((resolve) => host.child.once("exit", resolve));
	host.child.kill("SIGKILL");
	await dead;
}

/** Milliseconds until every pid is gone (polled up to 10 s, so a failure says how long it took). */
async function timeUntilGone(pids: number[]): Promise<number> {
	const started = Date.now();
	for (const pid of pids) await waitUntilGone(pid, 10_000);
	return Date.now() - started;
}

/** The guard processes (`/bin/sh -c groups=...`) whose parent is `hostPid`. */
function guardsOf(hostPid: number): number[] {
	return readdirSync("/proc")
		.filter((entry) => /^\d+$/.test(entry))
		.map(Number)
		.filter((pid) => {
			try {
				const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
				const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
				return ppid === hostPid && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("groups=");
			} catch {
				return false;
			}
		});
}

describe("spawnGuardedGroup", () => {
	it("kills a group, its background process included, within 2 s of a SIGKILL of the host", async () => {
		const host = startHost();
		const first = await host.send("group");
		const second = await host.send("group");
		expect([...first, ...second].map(processGone)).toEqual([false, false, false, false]);
		await killHost(host);
		expect(await timeUntilGone([...first, ...second])).toBeLessThan(2_000);
	});

	it("kills what a group's leader left running as soon as the leader exits", async () => {
		const host = startHost();
		const [background] = await host.send("leader-exits");
		// Reported once the shell has exited; the host is alive.
		expect(await timeUntilGone([background])).toBeLessThan(2_000);
		expect(processGone(host.child.pid as number)).toBe(false);
	});

	it("does not keep the host's event loop alive, and kills the groups still registered when the host exits by itself", async () => {
		const host = startHost();
		const guarded = await host.send("group");
		const exited = new Promise<number | null>((resolve) => host.child.once("exit", resolve));
		await host.send("quit");
		expect(await exited).toBe(0);
		expect(await timeUntilGone(guarded)).toBeLessThan(2_000);
	});

	it("replaces a guard killed by hand with one that knows every registered group", async () => {
		const host = startHost();
		const first = await host.send("group");
		const hostPid = host.child.pid as number;
		const [guard] = guardsOf(hostPid);
		expect(guard).toBeGreaterThan(0);
		process.kill(guard, "SIGKILL");
		// A loaded machine may show the killed guard alive for a moment: wait for it to go and a new one to come.
		const deadline = Date.now() + 10_000;
		const alive = () => guardsOf(hostPid).filter((pid) => !processGone(pid));
		let live = alive();
		while ((live.length === 0 || live.includes(guard)) && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 50));
			live = alive();
		}
		expect(live).toHaveLength(1);
		expect(live[0]).not.toBe(guard);
		const second = await host.send("group");
		await killHost(host);
		expect(await timeUntilGone([...first, ...second])).toBeLessThan(2_000);
	});
});
