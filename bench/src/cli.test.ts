import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseArgs } from "./cli.js";

const scratch = await mkdtemp(join(tmpdir(), "bench-cli-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("bench command line", () => {
	it("resolves the default fixtures and output folder from the script's location", () => {
		const repo = join(scratch, "repo");
		const options = (() => {
			try {
				return parseArgs([], join(repo, "bench", "dist"));
			} catch (error) {
				return error as Error;
			}
		})();
		expect(options).toBeInstanceOf(Error);
		expect((options as Error).message).toContain(resolve(scratch, "repo", "fixtures", "outputs"));
		expect((options as Error).message).toMatch(/pass --cases <dir>/);
	});

	it("takes explicit folders and the smoke flag", () => {
		const options = parseArgs(
			["--cases", scratch, "--trajectories", scratch, "--out", join(scratch, "out"), "--smoke"],
			join(scratch, "repo", "bench", "dist"),
		);
		expect(options).toEqual({ casesDir: scratch, trajectoriesDir: scratch, outDir: join(scratch, "out"), smoke: true });
	});

	it("runs only the speed buckets with --only speed, which needs no trajectories folder", () => {
		const options = parseArgs(
			["--cases", scratch, "--trajectories", join(scratch, "missing"), "--only", "speed"],
			join(scratch, "repo", "bench", "dist"),
		);
		expect(options.only).toBe("speed");
		expect(options.casesDir).toBe(scratch);
		expect(() => parseArgs(["--cases", scratch, "--trajectories", join(scratch, "missing")], scratch)).toThrow(
			/missing does not exist/,
		);
	});

	it("runs only the trajectory replay with --only trajectories, which needs no labelled outputs folder", () => {
		const options = parseArgs(
			["--cases", join(scratch, "missing"), "--trajectories", scratch, "--only", "trajectories"],
			join(scratch, "repo", "bench", "dist"),
		);
		expect(options).toEqual({
			casesDir: join(scratch, "missing"),
			trajectoriesDir: scratch,
			outDir: resolve(scratch, "repo", "bench", "results"),
			smoke: false,
			only: "trajectories",
		});
		expect(() => parseArgs(["--trajectories", join(scratch, "gone"), "--only", "trajectories"], scratch)).toThrow(
			`${join(scratch, "gone")} does not exist. pass --trajectories <dir> to point at a corpus.`,
		);
	});

	it("rejects --only without a part or with a part it does not know", () => {
		expect(() => parseArgs(["--only"], scratch)).toThrow(
			"--only needs the part to run: speed, trajectories (got nothing).",
		);
		expect(() => parseArgs(["--only", "labelled"], scratch)).toThrow(
			"--only needs the part to run: speed, trajectories (got labelled).",
		);
	});

	it("rejects an unknown argument and a flag without its folder", () => {
		expect(() => parseArgs(["--fast"], scratch)).toThrow(/Unknown argument --fast/);
		expect(() => parseArgs(["--cases"], scratch)).toThrow(/--cases needs a directory/);
	});
});
