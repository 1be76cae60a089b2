/**
 * The offline benchmark: every arm over a labelled-output corpus and a trajectory corpus, plus our
 * broker's recovery and speed. Returns every figure; `writeReport` turns them into files.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ContextConfig, DEFAULT_CONFIG } from "prime-agent-context";
import { type Arm, PrimeContextArm, type PrimeContextDeps, peerArms, type RecoveryCheck } from "./arms/index.js";
import {
	type LabelledCase,
	listTrajectoryFiles,
	readLabelledCorpus,
	readTrajectory,
	type Trajectory,
} from "./corpus/index.js";
import { type LabelledArmResult, runLabelled } from "./run/labelled.js";
import { FULL_BUCKETS, runSpeed, SMOKE_BUCKETS, type SpeedResult } from "./run/speed.js";
import { runTrajectories, type TrajectoryArmResult } from "./run/trajectories.js";

export interface BenchmarkOptions {
	casesDir: string;
	trajectoriesDir: string;
	/** Four cases (one large enough for a capsule), one trajectory, small speed buckets. */
	smoke?: boolean;
	primeContext: PrimeContextDeps;
	progress?: (message: string) => void;
}

export interface BenchmarkResults {
	generatedAt: string;
	smoke: boolean;
	node: string;
	tokenizer: string;
	config: ContextConfig;
	corpora: {
		cases: { dir: string; count: number; bytes: number; names: string[] };
		trajectories: { dir: string; count: number; observations: number; bytes: number; ids: string[] };
	};
	arms: { name: string; rule: string }[];
	labelled: LabelledArmResult[];
	trajectories: TrajectoryArmResult[];
	recovery: { labelled: RecoveryCheck; trajectories: RecoveryCheck };
	speed: SpeedResult;
}

/**
 * Smoke mode: the first three cases below the capsule threshold (24 KiB), the first case between
 * 24 and 64 KiB (so one capsule is exercised), and the first trajectory.
 */
export const SMOKE = { cases: 4, small: 3, smallMaxBytes: 24 * 1024, largeMaxBytes: 64 * 1024, trajectories: 1 };

export function smokeCases(cases: LabelledCase[]): LabelledCase[] {
	const small = cases.filter((item) => item.bytes < SMOKE.smallMaxBytes).slice(0, SMOKE.small);
	const large = cases.filter((item) => item.bytes >= SMOKE.smallMaxBytes && item.bytes <= SMOKE.largeMaxBytes);
	return [...small, ...large.slice(0, SMOKE.cases - small.length)].sort((a, b) => a.name.localeCompare(b.name));
}

export async function runBenchmark(options: BenchmarkOptions): Promise<BenchmarkResults> {
	const progress = options.progress ?? (() => {});
	const smoke = options.smoke ?? false;
	let cases = await readLabelledCorpus(options.casesDir);
	let trajectoryFiles = await listTrajectoryFiles(options.trajectoriesDir);
	if (smoke) {
		cases = smokeCases(cases);
		trajectoryFiles = trajectoryFiles.slice(0, SMOKE.trajectories);
	}
	const trajectories = await readTrajectories(trajectoryFiles);

	const scratch = await mkdtemp(join(tmpdir(), "prime-bench-"));
	try {
		const speed = await timeBroker(cases, options, scratch);
		const labelledOurs = new PrimeContextArm(options.primeContext, join(scratch, "labelled"));
		const labelled = await runLabelled(cases, [...peerArms(), labelledOurs], progress);
		const replay = await replayCorpus(trajectories, options.primeContext, join(scratch, "trajectories"), progress);
		const arms: Arm[] = [...peerArms(), labelledOurs];
		return {
			generatedAt: new Date().toISOString(),
			smoke,
			node: process.version,
			tokenizer: "o200k_base (gpt-tokenizer)",
			config: DEFAULT_CONFIG,
			corpora: {
				cases: {
					dir: options.casesDir,
					count: cases.length,
					bytes: sumBytes(cases),
					names: cases.map((item) => item.name),
				},
				trajectories: trajectoryCorpus(options.trajectoriesDir, trajectories),
			},
			arms: arms.map(({ name, rule }) => ({ name, rule })),
			labelled,
			trajectories: replay.results,
			recovery: { labelled: await labelledOurs.finish(), trajectories: replay.recovery },
			speed,
		};
	} finally {
		await rm(scratch, { recursive: true, force: true });
	}
}

async function readTrajectories(files: string[]): Promise<Trajectory[]> {
	const trajectories: Trajectory[] = [];
	for (const file of files) trajectories.push(await readTrajectory(file));
	return trajectories;
}

function trajectoryCorpus(dir: string, trajectories: Trajectory[]): BenchmarkResults["corpora"]["trajectories"] {
	return {
		dir,
		count: trajectories.length,
		observations: trajectories.reduce((sum, run) => sum + run.steps.length, 0),
		bytes: trajectories.reduce(
			(sum, run) => sum + run.steps.reduce((acc, step) => acc + Buffer.byteLength(step.observation), 0),
			0,
		),
		ids: trajectories.map((run) => run.id),
	};
}

/** Every arm over the trajectories (ours with and without ageing), and our archive's recovery check. */
async function replayCorpus(
	trajectories: Trajectory[],
	deps: PrimeContextDeps,
	root: string,
	progress: (message: string) => void,
): Promise<{ results: TrajectoryArmResult[]; recovery: RecoveryCheck }> {
	const ours = new PrimeContextArm(deps, root);
	const results = await runTrajectories(trajectories, [...peerArms(), ours], progress);
	return { results, recovery: await ours.finish() };
}

export interface TrajectoriesOnlyResults {
	generatedAt: string;
	smoke: boolean;
	node: string;
	tokenizer: string;
	config: ContextConfig;
	corpus: BenchmarkResults["corpora"]["trajectories"];
	trajectories: TrajectoryArmResult[];
	recovery: RecoveryCheck;
}

/**
 * Only the trajectory replay and its recovery check (`npm run bench -- --only trajectories`): every
 * arm, ours with and without ageing, over the same runs as the full benchmark.
 */
export async function runTrajectoriesOnly(
	options: Pick<BenchmarkOptions, "trajectoriesDir" | "smoke" | "primeContext" | "progress">,
): Promise<TrajectoriesOnlyResults> {
	let files = await listTrajectoryFiles(options.trajectoriesDir);
	if (options.smoke) files = files.slice(0, SMOKE.trajectories);
	const trajectories = await readTrajectories(files);
	const scratch = await mkdtemp(join(tmpdir(), "prime-bench-"));
	try {
		const replay = await replayCorpus(trajectories, options.primeContext, scratch, options.progress ?? (() => {}));
		return {
			generatedAt: new Date().toISOString(),
			smoke: options.smoke ?? false,
			node: process.version,
			tokenizer: "o200k_base (gpt-tokenizer)",
			config: DEFAULT_CONFIG,
			corpus: trajectoryCorpus(options.trajectoriesDir, trajectories),
			trajectories: replay.results,
			recovery: replay.recovery,
		};
	} finally {
		await rm(scratch, { recursive: true, force: true });
	}
}

const sumBytes = (cases: LabelledCase[]) => cases.reduce((sum, item) => sum + item.bytes, 0);

/** The speed buckets over windows of the labelled outputs' text, each sample in its own session under `scratch`. */
function timeBroker(
	cases: LabelledCase[],
	options: Pick<BenchmarkOptions, "smoke" | "primeContext" | "progress">,
	scratch: string,
): Promise<SpeedResult> {
	const progress = options.progress ?? (() => {});
	progress("speed");
	return runSpeed(
		cases.map((item) => item.text),
		options.smoke ? SMOKE_BUCKETS : FULL_BUCKETS,
		async (id) => {
			const archive = await options.primeContext.openArchive(join(scratch, "speed"), id);
			return { archive, broker: await options.primeContext.createBroker(archive) };
		},
		progress,
		scratch,
		() => options.primeContext.selectedOnThread(),
	);
}

export interface SpeedOnlyResults {
	generatedAt: string;
	smoke: boolean;
	node: string;
	config: ContextConfig;
	corpus: { dir: string; count: number; bytes: number };
	speed: SpeedResult;
}

/**
 * Only the broker's speed buckets (`npm run bench -- --only speed`): the same inputs, buckets and
 * fresh sessions as the full run, in a minute or two instead of the whole benchmark.
 */
export async function runSpeedOnly(
	options: Pick<BenchmarkOptions, "casesDir" | "smoke" | "primeContext" | "progress">,
): Promise<SpeedOnlyResults> {
	const cases = await readLabelledCorpus(options.casesDir);
	const scratch = await mkdtemp(join(tmpdir(), "prime-bench-"));
	try {
		const speed = await timeBroker(cases, options, scratch);
		return {
			generatedAt: new Date().toISOString(),
			smoke: options.smoke ?? false,
			node: process.version,
			config: DEFAULT_CONFIG,
			corpus: { dir: options.casesDir, count: cases.length, bytes: sumBytes(cases) },
			speed,
		};
	} finally {
		await rm(scratch, { recursive: true, force: true });
	}
}
