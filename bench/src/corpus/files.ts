/** The replay corpus on disk: which files of a folder are runs, and reading one whatever its format. */
import { readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseSession } from "./session.js";
import { parseTrajectory, type Trajectory } from "./trajectory.js";

/** Reads one `.traj.json`, `.traj.json.gz` or session `.jsonl` file. */
export async function readTrajectory(path: string): Promise<Trajectory> {
	const raw = await readFile(path);
	if (path.endsWith(".jsonl")) return parseSession(raw.toString("utf8"), basename(path, ".jsonl"));
	const json = path.endsWith(".gz") ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
	return parseTrajectory(json, basename(path).replace(/\.traj\.json(\.gz)?$/, ""));
}

/** Paths of the trajectory and session files in `dir`, sorted by name. */
export async function listTrajectoryFiles(dir: string): Promise<string[]> {
	let names: string[];
	try {
		names = await readdir(dir);
	} catch (error) {
		throw new Error(
			`Cannot read the trajectory folder ${dir}: ${(error as Error).message}. Pass --trajectories <dir>.`,
		);
	}
	const files = names.filter((name) => /\.traj\.json(\.gz)?$|\.jsonl$/.test(name)).sort();
	if (files.length === 0) throw new Error(`No .traj.json, .traj.json.gz or session .jsonl files in ${dir}.`);
	return files.map((name) => join(dir, name));
}
