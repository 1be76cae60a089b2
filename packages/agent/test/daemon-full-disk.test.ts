import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DaemonWorld, eventually, killDaemon, makeDaemonWorld } from "prime-agent-test-support/daemon-world";
import { cannotMount, mountSmallDisk, type SmallDisk, tempFilesUnder } from "prime-agent-test-support/small-disk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { daemonPaths, isSameProcess, readWorkerRecord, workerKeys } from "../src/daemon/index.js";
import { ExitCode } from "../src/errors.js";

// Real processes (a supervisor, workers, kernels) with the agent home on a 2 MB tmpfs filled to the last byte.
vi.setConfig({ testTimeout: 120_000 });

let world: DaemonWorld | undefined;
let disk: SmallDisk | undefined;
afterEach(async () => {
	if (world) killDaemon(world.home);
	// Unmounted before the world's folder is removed (lazily: a dying process may still be inside).
	disk?.unmount();
	disk = undefined;
	await world?.teardown();
	world = undefined;
});

/** A daemon world whose agent home is a small tmpfs (its models.json copied in). */
async function worldOnSmallDisk(script: Parameters<typeof makeDaemonWorld>[0]): Promise<[DaemonWorld, SmallDisk]> {
	world = await makeDaemonWorld(script);
	disk = mountSmallDisk(world.home);
	return [world, disk];
}

function supervisorOf(w: DaemonWorld): { pid: number; startId: string } {
	return JSON.parse(readFileSync(daemonPaths(w.home).supervisor, "utf8")) as { pid: number; startId: string };
}

async function agent(w: DaemonWorld, key: string) {
	const found = (await w.agents()).find((info) => info.key === key);
	if (!found) throw new Error(`no agent ${key}`);
	return found;
}

describe.skipIf(cannotMount !== undefined)(
	`the daemon on a full disk${cannotMount ? ` (skipped: ${cannotMount})` : ""}`,
	() => {
		it("a run the disk refuses gets the disk and the record's path from the supervisor, which stays and serves again once space returns", async () => {
			const [w, small] = await worldOnSmallDisk([{ text: "before" }, { text: "after" }]);
			const home = w.home;
			const first = await w.cli(["-p", "one", "--model", "local/coder"]);
			expect(first.stdout).toBe("before\n");
			const supervisor = supervisorOf(w);

			small.fill();
			const refused = await w.cli(["-p", "two", "--model", "local/coder"]);
			expect(refused.code).toBe(ExitCode.disk);
			expect(refused.stderr).toMatch(
				new RegExp(
					`^Error: No space left on ${home} \\(tmpfs, 0 bytes free\\): ${home}/daemon/workers/[0-9a-f]{8}/worker\\.json could not be written\\.\\nFree space on ${home}, then try again\\.\\n$`,
				),
			);
			// Nothing of the refused agent is left: no record, no temp file.
			expect(workerKeys(daemonPaths(home)).length).toBe(1);
			expect(tempFilesUnder(home)).toEqual([]);
			expect(isSameProcess(supervisor.pid, supervisor.startId)).toBe(true);
			expect((await w.agents()).length).toBe(1);

			small.free();
			const again = await w.cli(["-p", "three", "--model", "local/coder"]);
			expect(again.stderr).toBe("");
			expect(again.stdout).toBe("after\n");
			expect(supervisorOf(w).pid).toBe(supervisor.pid);
		});

		it("a worker that dies while the disk is full: the supervisor stays, shows the agent failed with the disk's reason, and writes its record once space returns", async () => {
			const [w, small] = await worldOnSmallDisk([{ text: "still here" }]);
			const home = w.home;
			const started = await w.cli(["--model", "local/coder"], "/exit\n");
			expect(started.code).toBe(0);
			const [key] = workerKeys(daemonPaths(home)) as [string];
			const pid = readWorkerRecord(daemonPaths(home), key)?.pid as number;
			const supervisor = supervisorOf(w);

			small.fill();
			process.kill(pid, "SIGKILL");
			const failed = await eventually("the agent to fail", async () => {
				const now = await agent(w, key);
				return now.state === "failed" ? now : undefined;
			});
			expect(failed.failedReason).toBe(
				`No space left on ${home} (tmpfs, 0 bytes free): ${home}/daemon/workers/${key}/worker.json could not be written. Free space on ${home}, then \`prime-agent attach ${key}\` starts it again.`,
			);
			expect(isSameProcess(supervisor.pid, supervisor.startId)).toBe(true);
			// Not restarted into a disk that cannot hold its session.
			expect(failed.pid).toBeUndefined();

			small.free();
			const saved = await eventually("the record to be written again", async () => {
				const now = await agent(w, key);
				return now.state === "saved" ? now : undefined;
			});
			expect(saved.crashes).toBe(1);
			expect(readWorkerRecord(daemonPaths(home), key)?.crashes).toBe(1);
			expect(tempFilesUnder(home)).toEqual([]);
			const attached = await w.cli(["attach", key], "/exit\n");
			expect(attached.code).toBe(0);
			expect((await agent(w, key)).state).toBe("idle");
			expect(supervisorOf(w).pid).toBe(supervisor.pid);
		});

		it("no supervisor can start on a full disk: the client says why at once (not after a wait), and all works once space returns", async () => {
			const [w, small] = await worldOnSmallDisk([{ text: "back" }]);
			const home = w.home;
			// A supervisor started (token and folders made) while there was space, then killed.
			expect(await w.agents()).toEqual([]);
			const old = supervisorOf(w);
			killDaemon(home);
			await eventually("the supervisor to die", () => !isSameProcess(old.pid, old.startId));

			small.fill();
			const began = Date.now();
			const refused = await w.cli(["-p", "hi", "--model", "local/coder"]);
			const took = Date.now() - began;
			expect(refused.stderr).toBe(
				`Error: No space left on ${home} (tmpfs, 0 bytes free): ${join(home, "daemon", "supervisor.json")} could not be written.\nFree space on ${home}, then run the command again.\n`,
			);
			expect(refused.code).toBe(ExitCode.disk);
			// The client used to wait 15 s for a supervisor that had died at once.
			expect(took).toBeLessThan(10_000);
			expect(tempFilesUnder(home)).toEqual([]);

			small.free();
			// Temp files a kill left mid-write (their process, the old supervisor, is gone) go at the next start.
			const leftovers = [
				join(home, "daemon", `supervisor.json.${old.pid}.tmp`),
				join(home, `settings.json.${old.pid}.tmp`),
			];
			for (const path of leftovers) writeFileSync(path, "{");
			const again = await w.cli(["-p", "hi", "--model", "local/coder"]);
			expect(again.stderr).toBe("");
			expect(again.stdout).toBe("back\n");
			expect(tempFilesUnder(home)).toEqual([]);
		});
	},
);
