import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { daemonPaths, isSameProcess, readWorkerRecord, workerKeys } from "../src/daemon/index.js";
import { type DaemonWorld, eventually, makeDaemonWorld } from "./daemon-world.js";

// Real processes: a supervisor, workers and kernels, whose record writes are made to fail (as on a
// full disk: a record's path made a folder, so every write of it fails).
vi.setConfig({ testTimeout: 90_000 });

let world: DaemonWorld | undefined;
afterEach(async () => {
	await world?.teardown();
	world = undefined;
});

/** Workers of the world whose process still runs. */
function liveWorkers(w: DaemonWorld): number[] {
	const paths = daemonPaths(w.home);
	return workerKeys(paths).flatMap((key) => {
		const record = readWorkerRecord(paths, key);
		return record?.pid && isSameProcess(record.pid, record.startId) ? [record.pid] : [];
	});
}

it("a one-shot worker that cannot write its record still stops when its run ends", async () => {
	// The cell makes the worker's own record a folder: every later write of it fails.
	const breakRecord = [
		"import glob, os",
		"found = glob.glob(os.path.join(os.environ['PRIME_AGENT_DIR'], 'daemon', 'workers', '*', 'session.json'))",
		"for path in found:",
		"    os.remove(path)",
		"    os.mkdir(path)",
		"print(len(found))",
	].join("\n");
	world = await makeDaemonWorld([{ code: breakRecord }, { text: "Done." }]);
	const run = await world.cli(["-p", "break the record", "--model", "local/coder"]);
	expect(run.code).toBe(0);
	expect(run.stdout).toBe("Done.\n");
	const w = world;
	await eventually("the worker to exit", () => liveWorkers(w).length === 0, 20_000);
	const [key] = workerKeys(daemonPaths(w.home));
	expect(readFileSync(join(daemonPaths(w.home).workers, String(key), "worker.log"), "utf8")).toContain(
		"Could not write this worker's record:",
	);
});

it("shutdown stops every agent when the daemon cannot record the stops", async () => {
	world = await makeDaemonWorld([]);
	const paths = daemonPaths(world.home);
	const started = await world.cli(["--model", "local/coder"], "/exit\n");
	expect(started.code).toBe(0);
	const [key] = workerKeys(paths) as [string];
	const supervisor = JSON.parse(readFileSync(paths.supervisor, "utf8")) as { pid: number };
	// The supervisor writes a record through a temp file named by its pid: a folder there fails the write.
	const temp = join(paths.workers, key, `worker.json.${supervisor.pid}.tmp`);
	mkdirSync(temp);
	const stopped = await world.cli(["shutdown"]);
	expect(stopped.stderr).toBe("");
	expect(stopped.stdout).toBe("Stopped every agent and the daemon.\n");
	expect(stopped.code).toBe(0);
	expect(liveWorkers(world)).toEqual([]);
	expect(readFileSync(paths.log, "utf8")).toContain(`Could not record the stop of agent ${key}:`);
	rmSync(temp, { recursive: true });
});
