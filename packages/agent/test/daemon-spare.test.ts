import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type DaemonWorld, eventually, makeDaemonWorld } from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it } from "vitest";
import { plainEnv, unwrap } from "../src/daemon/client.js";
import {
	connectSupervisor,
	daemonContext,
	isSameProcess,
	processStartId,
	readWorkerRecord,
	type SupervisorClient,
	workerKeys,
} from "../src/daemon/index.js";
import type { RequestOf } from "../src/daemon/protocol.js";
import type { SupervisorRequests } from "../src/daemon/requests.js";
import { daemonPaths } from "../src/daemon/state.js";

let world: DaemonWorld | undefined;

afterEach(async () => {
	await world?.teardown();
	world = undefined;
});

/** The supervisor's pid, from its record. */
function supervisorPid(home: string): number {
	return (JSON.parse(readFileSync(daemonPaths(home).supervisor, "utf8")) as { pid: number }).pid;
}

/** The spare workers (`worker-main.js --spare`) whose parent is process `parent`, by their pids. */
function sparesOf(parent: number): number[] {
	return readdirSync("/proc")
		.filter((name) => /^\d+$/.test(name))
		.filter((pid) => {
			try {
				const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
				const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
				const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
				return ppid === parent && args.some((arg) => arg.endsWith("worker-main.js")) && args.includes("--spare");
			} catch {
				return false; // Gone meanwhile.
			}
		})
		.map(Number);
}

/** The key of the newest agent. */
function newestKey(home: string): string {
	return workerKeys(daemonPaths(home)).at(-1) as string;
}

describe("a spare worker: loaded ahead, it serves the next session start", () => {
	it("after a session starts the supervisor keeps one spare; the next run's worker is that process, its log the agent's", async () => {
		world = await makeDaemonWorld([{ text: "First answer." }, { text: "Second answer." }]);
		const first = await world.cli(["--model", "local/coder", "-p", "one"]);
		expect(first.stdout).toBe("First answer.\n");
		const supervisor = supervisorPid(world.home);
		// It loads the worker's modules first: seconds on a loaded machine.
		const [spare] = await eventually(
			"a spare worker",
			() => {
				const spares = sparesOf(supervisor);
				return spares.length > 0 ? spares : undefined;
			},
			60_000,
		);
		expect(sparesOf(supervisor).length).toBe(1);
		const spareStart = processStartId(spare as number);

		const second = await world.cli(["--model", "local/coder", "-p", "two"]);
		expect(second.stdout).toBe("Second answer.\n");
		const key = newestKey(world.home);
		const record = readWorkerRecord(daemonPaths(world.home), key);
		// The same process (pid and start identity): the spare became this agent's worker.
		expect(record?.pid).toBe(spare);
		expect(record?.startId).toBe(spareStart);
		// What it wrote is in the agent's log, and no spare's log is left in the daemon's folder.
		const log = readFileSync(join(daemonPaths(world.home).workers, key, "worker.log"), "utf8");
		expect(log).toContain(`Worker ${key} stopped: `);
		// The one left is the next spare's, started once this worker served its session.
		expect(readdirSync(daemonPaths(world.home).dir).filter((name) => name.startsWith("spare-"))).toEqual([
			`spare-${supervisor}-2.log`,
		]);
	});

	it("a restart (`/model`) is served by the spare too: the agent's log keeps its first worker's lines, then the spare's", async () => {
		world = await makeDaemonWorld([]);
		const context = daemonContext(world.env);
		const ask = async <K extends keyof SupervisorRequests & string>(request: RequestOf<SupervisorRequests, K>) => {
			const supervisor = (await connectSupervisor(context)) as SupervisorClient;
			try {
				return unwrap(await supervisor.request(request, 120_000));
			} finally {
				supervisor.close();
			}
		};
		const env = plainEnv(world.env);
		const { key } = await ask({
			type: "start",
			options: { cwd: world.project, model: "local/coder" },
			owner: "resident",
			env,
		});
		const first = readWorkerRecord(daemonPaths(world.home), key)?.pid;
		const supervisor = supervisorPid(world.home);
		const [spare] = await eventually(
			"a spare worker",
			() => {
				const spares = sparesOf(supervisor);
				return spares.length > 0 ? spares : undefined;
			},
			60_000,
		);
		expect(spare).not.toBe(first);
		await ask({ type: "restart", key, env, changes: { model: "local/coder" } });
		expect(readWorkerRecord(daemonPaths(world.home), key)?.pid).toBe(spare);
		const log = readFileSync(join(daemonPaths(world.home).workers, key, "worker.log"), "utf8");
		expect(log.split("\n").filter((line) => line.startsWith(`Worker ${key} stopped: `))).toEqual([
			`Worker ${key} stopped: started again on another model`,
		]);
		await ask({ type: "stop", key });
		expect(
			readFileSync(join(daemonPaths(world.home).workers, key, "worker.log"), "utf8")
				.split("\n")
				.filter((line) => line.startsWith(`Worker ${key} stopped: `)),
		).toEqual([`Worker ${key} stopped: started again on another model`, `Worker ${key} stopped: it was shut down`]);
	});

	it("a spare goes with its supervisor (killed): no worker without an agent is left", async () => {
		world = await makeDaemonWorld([{ text: "Answer." }]);
		await world.cli(["--model", "local/coder", "-p", "one"]);
		const supervisor = supervisorPid(world.home);
		// It loads the worker's modules first: seconds on a loaded machine.
		const [spare] = await eventually(
			"a spare worker",
			() => {
				const spares = sparesOf(supervisor);
				return spares.length > 0 ? spares : undefined;
			},
			60_000,
		);
		const spareStart = processStartId(spare as number);
		process.kill(supervisor, "SIGKILL");
		await eventually("the spare to exit", () => !isSameProcess(spare, spareStart), 60_000);
		expect(isSameProcess(spare, spareStart)).toBe(false);
	});

	it(`with PRIME_AGENT_SPARE_WORKER=0 every worker starts from nothing`, async () => {
		world = await makeDaemonWorld([{ text: "First answer." }, { text: "Second answer." }], {
			PRIME_AGENT_SPARE_WORKER: "0",
		});
		await world.cli(["--model", "local/coder", "-p", "one"]);
		const second = await world.cli(["--model", "local/coder", "-p", "two"]);
		expect(second.stdout).toBe("Second answer.\n");
		expect(sparesOf(supervisorPid(world.home))).toEqual([]);
		expect(existsSync(join(daemonPaths(world.home).workers, newestKey(world.home), "worker.log"))).toBe(true);
	});
});
