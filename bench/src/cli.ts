#!/usr/bin/env node
/**
 * `npm run bench -- [--cases <dir>] [--trajectories <dir>] [--out <dir>] [--smoke] [--only speed|trajectories]`
 * Defaults: the repository's fixtures (`fixtures/`) and `bench/results/`.
 */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { primeContextDeps } from "./arms/prime-context-binding.js";
import { runBenchmark, runSpeedOnly, runTrajectoriesOnly } from "./bench.js";
import { writeReport, writeSpeedReport, writeTrajectoriesReport } from "./report/index.js";
import { losses, speedTargets, type Target, targets, trajectoryTargets } from "./report/verdict.js";

const USAGE = `Usage: npm run bench -- [--cases <dir>] [--trajectories <dir>] [--out <dir>] [--smoke] [--only speed|trajectories]
  --cases <dir>          labelled outputs: <case>/output.txt + meta.json (default fixtures/outputs)
  --trajectories <dir>   mini-swe-agent .traj.json(.gz) files and agent session .jsonl files
                         (default fixtures/trajectories)
  --out <dir>            where results.json, results.md and the SVG chart go (default bench/results)
  --smoke                four cases (one capsule-sized), one trajectory, small speed buckets
  --only speed           only the broker's speed buckets (windows of the labelled outputs);
                         writes speed.json and speed.md
  --only trajectories    only the trajectory replay (every arm, ours with and without ageing) and
                         the recovery check of its archive; writes trajectories.json and trajectories.md`;

/** Parts of the benchmark that run alone with `--only`. */
const PARTS = ["speed", "trajectories"] as const;

export interface CliOptions {
	casesDir: string;
	trajectoriesDir: string;
	outDir: string;
	smoke: boolean;
	/** Run only this part (`--only`); absent: everything. */
	only?: (typeof PARTS)[number];
}

/** Parses arguments; defaults are resolved from this script's location, never from the working directory. */
export function parseArgs(argv: string[], scriptDir: string): CliOptions {
	const repoRoot = resolve(scriptDir, "..", "..");
	const fixtures = resolve(repoRoot, "fixtures");
	const values: Record<string, string> = {};
	let smoke = false;
	let only: CliOptions["only"];
	for (let index = 0; index < argv.length; index++) {
		const flag = argv[index];
		if (flag === "--smoke") smoke = true;
		else if (flag === "--only") {
			const part = argv[++index];
			if (!PARTS.includes(part as (typeof PARTS)[number])) {
				throw new UsageError(`--only needs the part to run: ${PARTS.join(", ")} (got ${part ?? "nothing"}).`);
			}
			only = part as (typeof PARTS)[number];
		} else if (flag === "--help" || flag === "-h") throw new UsageError("");
		else if (["--cases", "--trajectories", "--out"].includes(flag)) {
			const value = argv[++index];
			if (!value || value.startsWith("--")) throw new UsageError(`${flag} needs a directory.`);
			values[flag.slice(2)] = resolve(value);
		} else throw new UsageError(`Unknown argument ${flag}.`);
	}
	const casesDir = values.cases ?? resolve(fixtures, "outputs");
	const trajectoriesDir = values.trajectories ?? resolve(fixtures, "trajectories");
	// The speed buckets read only the labelled outputs; the replay only the trajectories.
	const needed = [
		...(only === "trajectories" ? [] : [["--cases", casesDir]]),
		...(only === "speed" ? [] : [["--trajectories", trajectoriesDir]]),
	];
	for (const [flag, dir] of needed) {
		if (!existsSync(dir)) {
			throw new UsageError(
				`${dir} does not exist. ${values[flag.slice(2)] ? "" : "The default fixtures folder is fixtures/ in the repository; "}pass ${flag} <dir> to point at a corpus.`,
			);
		}
	}
	const outDir = values.out ?? resolve(repoRoot, "bench", "results");
	return only === undefined
		? { casesDir, trajectoriesDir, outDir, smoke }
		: { casesDir, trajectoriesDir, outDir, smoke, only };
}

class UsageError extends Error {}

/** A single progress line on stderr, rewritten in place on a terminal and throttled otherwise. */
function progressLine(): { update: (message: string) => void; done: () => void } {
	const tty = process.stderr.isTTY;
	let last = 0;
	const started = Date.now();
	return {
		update(message) {
			const now = Date.now();
			if (now - last < (tty ? 100 : 2_000)) return;
			last = now;
			const line = `[bench ${((now - started) / 1000).toFixed(0)}s] ${message}`;
			process.stderr.write(tty ? `\r\u001b[K${line.slice(0, (process.stderr.columns ?? 120) - 1)}` : `${line}\n`);
		},
		done() {
			if (tty) process.stderr.write("\r\u001b[K");
		},
	};
}

async function main(): Promise<void> {
	let options: CliOptions;
	try {
		options = parseArgs(process.argv.slice(2), dirname(fileURLToPath(import.meta.url)));
	} catch (error) {
		if (!(error instanceof UsageError)) throw error;
		process.stderr.write(`${error.message ? `${error.message}\n` : ""}${USAGE}\n`);
		process.exitCode = error.message ? 2 : 0;
		return;
	}
	const progress = progressLine();
	if (options.only === "speed") {
		const speed = await runSpeedOnly({
			casesDir: options.casesDir,
			smoke: options.smoke,
			primeContext: primeContextDeps,
			progress: progress.update,
		});
		progress.done();
		const files = await writeSpeedReport(speed, options.outDir);
		for (const bucket of speed.speed.buckets) {
			process.stdout.write(
				`${bucket.label}: wall p50 ${bucket.p50Ms} ms, p95 ${bucket.p95Ms} ms; CPU p50 ${bucket.cpuP50Ms} ms, p95 ${bucket.cpuP95Ms} ms (${bucket.samples} samples${bucket.onThread > 0 ? `, ${bucket.onThread} selected on the selection thread` : ""}${bucket.warmup > 0 ? `; first of this size in the process ${bucket.coldFirstMs} ms` : ""})\n`,
			);
		}
		const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(" ");
		process.stdout.write(
			`load average ${load(speed.speed.loadAverageBefore)} before, ${load(speed.speed.loadAverageAfter)} after; machine reference ${speed.speed.referenceMsBefore} ms before, ${speed.speed.referenceMsAfter} ms after (a fixed workload, lower is faster)\n`,
		);
		printTargets(speedTargets(speed.speed));
		process.stdout.write(`\nWrote ${files.join(", ")}\n`);
		return;
	}
	if (options.only === "trajectories") {
		const replay = await runTrajectoriesOnly({
			trajectoriesDir: options.trajectoriesDir,
			smoke: options.smoke,
			primeContext: primeContextDeps,
			progress: progress.update,
		});
		progress.done();
		const files = await writeTrajectoriesReport(replay, options.outDir);
		printTargets(trajectoryTargets(replay.trajectories, replay.recovery));
		process.stdout.write(`\nWrote ${files.join(", ")}\n`);
		return;
	}
	const results = await runBenchmark({
		casesDir: options.casesDir,
		trajectoriesDir: options.trajectoriesDir,
		smoke: options.smoke,
		primeContext: primeContextDeps,
		progress: progress.update,
	});
	progress.done();
	const files = await writeReport(results, options.outDir);
	printTargets(targets(results));
	const lost = losses(results);
	if (lost.length > 0)
		process.stdout.write(`\nWhere prime-context loses:\n${lost.map((line) => `- ${line}`).join("\n")}\n`);
	process.stdout.write(`\nWrote ${files.join(", ")}\n`);
}

function printTargets(list: Target[]): void {
	for (const target of list)
		process.stdout.write(`${target.met ? "met   " : "MISSED"} ${target.target}: ${target.measured}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	main().catch((error) => {
		process.stderr.write(`\nThe benchmark failed: ${(error as Error).stack ?? error}\n`);
		process.exitCode = 1;
	});
}
