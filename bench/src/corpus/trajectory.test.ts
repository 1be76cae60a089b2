import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { listTrajectoryFiles, readTrajectory } from "./files.js";

const trajectories = fileURLToPath(new URL("../../../fixtures/trajectories/", import.meta.url));
const fixture = join(trajectories, "astropy__astropy-12907.traj.json.gz");
const scratch = await mkdtemp(join(tmpdir(), "bench-traj-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("mini-swe-agent trajectory reader (real fixture)", async () => {
	const recorded = JSON.parse(gunzipSync(await readFile(fixture)).toString("utf8")) as {
		messages: { role: string; content: string }[];
	};
	const observations = recorded.messages.slice(2).filter((message) => message.role === "user");

	it("keeps every observation in recorded order, exactly as recorded", async () => {
		const run = await readTrajectory(fixture);
		expect(run.id).toBe("astropy__astropy-12907");
		expect(run.system).toBe(recorded.messages[0].content);
		expect(run.task).toBe(recorded.messages[1].content);
		expect(run.steps.map((step) => step.observation)).toEqual(observations.map((message) => message.content));
	});

	it("pairs each observation with the command of the assistant message before it and its return code", async () => {
		const run = await readTrajectory(fixture);
		expect(run.steps[0].command).toBe("ls -R");
		expect(run.steps[0].exitCode).toBe(0);
		for (const [index, step] of run.steps.entries()) {
			const at = recorded.messages.indexOf(observations[index]);
			expect(step.assistant).toBe(recorded.messages[at - 1].content);
			if (step.command !== null) expect(step.assistant).toContain(step.command);
			const code = /^<returncode>(-?\d+)<\/returncode>/.exec(step.observation);
			expect(step.exitCode).toBe(code ? Number(code[1]) : null);
		}
	});

	it("reads the uncompressed .traj.json form the same way", async () => {
		const plain = join(scratch, "astropy__astropy-12907.traj.json");
		await writeFile(plain, gunzipSync(await readFile(fixture)));
		expect(await readTrajectory(plain)).toEqual(await readTrajectory(fixture));
		expect(await listTrajectoryFiles(scratch)).toEqual([plain]);
	});

	it("says which folder to pass when there are no trajectory files", async () => {
		const empty = await mkdtemp(join(scratch, "empty-"));
		await expect(listTrajectoryFiles(empty)).rejects.toThrow(/No \.traj\.json/);
		await expect(listTrajectoryFiles(join(scratch, "missing"))).rejects.toThrow(/--trajectories/);
	});
});
