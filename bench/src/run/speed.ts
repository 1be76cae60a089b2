/**
 * Broker time per observation by size bucket. Inputs are windows of real fixture text (the
 * labelled outputs concatenated, repeated when needed) cut at a line end to each bucket's size;
 * every sample starts at a different place so the broker sees distinct outputs. Each bucket is
 * timed twice: every sample in a fresh session (the cost of one observation by its size), then all
 * samples in one session (later observations are also compared with the earlier ones). Before the
 * timed runs, a few untimed observations of the bucket's size (other windows) warm the process up,
 * as a long-running agent is; the first of them is reported as the cold figure.
 */
import { open, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ObservationBroker, ObservationInput, SessionArchive } from "prime-agent-context";
import { percentile } from "../measure/size.js";

export interface SpeedBucket {
	label: string;
	bytes: number;
	samples: number;
	/** `text`: handed in as the visible text; `file`: as a complete-output file (a short visible text beside it). */
	source: "text" | "file";
	p50Ms: number;
	p95Ms: number;
	maxMs: number;
	/** CPU time of this process (main thread and the compression threads) per observation: less sensitive to other load than wall time. */
	cpuP50Ms: number;
	cpuP95Ms: number;
	/** p50 divided by the size in MiB: flat across buckets when time is linear in size. */
	p50MsPerMiB: number;
	/** The same samples observed one after another in a single session. */
	sameSession: { p50Ms: number; p95Ms: number; maxMs: number };
	/** Untimed warm-up observations of this size before the timed ones (other windows). */
	warmup: number;
	/** Wall time of the first warm-up observation: this size's first in the process (0 without warm-up). */
	coldFirstMs: number;
	/** Timed fresh-session samples whose lines were selected on the package's selection thread. */
	onThread: number;
}

export interface SpeedResult {
	buckets: SpeedBucket[];
	/** Peak resident set size of the process (KiB) before and after the timed runs. */
	maxRssKiBBefore: number;
	maxRssKiBAfter: number;
	/** The machine's 1, 5 and 15 minute load averages before and after the timed runs (other load moves the figures). */
	loadAverageBefore: number[];
	loadAverageAfter: number[];
	/** `referenceMs` before and after the timed runs: how fast the machine ran meanwhile. */
	referenceMsBefore: number;
	referenceMsAfter: number;
}

/** Log lines for `referenceMs`, made once (making them per call would time the collector too). */
const REFERENCE_LINES = Array.from(
	{ length: 35_000 },
	(_, i) => `tests/test_mod.py::TestCase::test_case[${i}] PASSED [ 42%]`,
);

/** Integer work of `referenceMs`. */
function hashWork(): number {
	let hash = 0x811c9dc5;
	for (let i = 0; i < 20_000_000; i++) hash = Math.imul(hash ^ (i & 255), 0x01000193);
	return hash;
}

/** Pattern work of `referenceMs`. */
function patternWork(): number {
	let matched = 0;
	for (let round = 0; round < 4; round++) {
		for (const line of REFERENCE_LINES) if (/FAIL|ERROR|\[\s*\d+%\]$/.test(line)) matched++;
	}
	return matched;
}

/** One round of `referenceMs`'s workload (two functions, each optimised on its own); its value keeps it from being optimised away. */
const referenceWork = (): number => hashWork() + patternWork();

/**
 * The time (ms, median of five rounds after one untimed) of a fixed CPU-bound workload that uses
 * nothing of the package and allocates nothing: a multiply-and-xor hash over 20 million numbers and
 * a pattern test of 140,000 log lines. Shared machines run faster and slower by the hour; this says
 * which a run got, so speed figures of different runs and machines can be set side by side (lower
 * is faster; 55-62 ms on the 2-core machine of bench/README.md).
 */
export function referenceMs(): number {
	let sink = referenceWork();
	const times: number[] = [];
	for (let round = 0; round < 5; round++) {
		const started = performance.now();
		sink += referenceWork();
		times.push(performance.now() - started);
	}
	times.sort((a, b) => a - b);
	return Number.isNaN(sink) ? 0 : round(times[2]);
}

export interface BucketSpec {
	label: string;
	bytes: number;
	samples: number;
	/** Observe through a complete-output file instead of the visible text (how 100 MB outputs arrive). */
	file?: boolean;
	/** Untimed observations of this size first (JIT warm-up), on windows other than the timed ones. */
	warmup?: number;
}

export const FULL_BUCKETS: BucketSpec[] = [
	{ label: "1 KB", bytes: 1_024, samples: 200, warmup: 20 },
	{ label: "100 KB", bytes: 100 * 1_024, samples: 50, warmup: 5 },
	{ label: "1 MB", bytes: 1_024 * 1_024, samples: 40, warmup: 5 },
	{ label: "10 MB", bytes: 10 * 1_024 * 1_024, samples: 5, warmup: 1 },
	{ label: "100 MB (file)", bytes: 100 * 1_024 * 1_024, samples: 2, file: true },
];

export const SMOKE_BUCKETS: BucketSpec[] = [
	{ label: "1 KB", bytes: 1_024, samples: 20 },
	{ label: "100 KB", bytes: 100 * 1_024, samples: 5 },
	{ label: "1 MB", bytes: 1_024 * 1_024, samples: 3 },
];

/** A window of `size` bytes (ending at a line end when one is near) of `source`, starting at `start`, wrapping. */
export function windowOf(source: Buffer, start: number, size: number): string {
	const parts: Buffer[] = [];
	let have = 0;
	let at = start % source.length;
	while (have < size) {
		const piece = source.subarray(at, Math.min(source.length, at + size - have));
		parts.push(piece);
		have += piece.length;
		at = 0;
	}
	const window = Buffer.concat(parts);
	const lastNewline = window.lastIndexOf(10);
	const cut = lastNewline >= window.length * 0.9 ? lastNewline + 1 : window.length;
	return window.subarray(0, cut).toString("utf8");
}

/** Writes a `bytes`-long window of `source` (wrapping) to a file in 1 MiB pieces, never holding it whole. */
async function writeWindowFile(path: string, source: Buffer, start: number, bytes: number): Promise<void> {
	const handle = await open(path, "w", 0o600);
	try {
		let have = 0;
		let at = start % source.length;
		while (have < bytes) {
			const piece = source.subarray(at, Math.min(source.length, at + 1024 * 1024, at + bytes - have));
			await handle.write(piece);
			have += piece.length;
			at = at + piece.length >= source.length ? 0 : at + piece.length;
		}
	} finally {
		await handle.close();
	}
}

interface Timing {
	wall: number;
	cpu: number;
}

export async function runSpeed(
	texts: string[],
	buckets: BucketSpec[],
	session: (id: string) => Promise<{ archive: SessionArchive; broker: ObservationBroker }>,
	progress: (message: string) => void = () => {},
	scratch: string = tmpdir(),
	selectedOnThread: () => number = () => 0,
): Promise<SpeedResult> {
	const source = Buffer.from(texts.join("\n"), "utf8");
	const maxRssKiBBefore = process.resourceUsage().maxRSS;
	const loadAverageBefore = loadavg().map(round);
	const referenceMsBefore = referenceMs();
	const results: SpeedBucket[] = [];
	for (const bucket of buckets) {
		const stride = Math.floor(source.length / bucket.samples) + 7_919;
		const file = join(scratch, `speed-${bucket.bytes}.log`);
		const inputFor = async (sample: number): Promise<ObservationInput> => {
			const base = { tool: "bash", isError: false, exitCode: 0, command: "cat output.log" };
			const start = Math.floor(sample * stride);
			if (!bucket.file) return { ...base, text: windowOf(source, start, bucket.bytes) };
			await writeWindowFile(file, source, start, bucket.bytes);
			return { ...base, text: "(complete output in a file)", fullOutputPath: file };
		};
		const time = async (broker: ObservationBroker, input: ObservationInput): Promise<Timing> => {
			const cpu = process.cpuUsage();
			const started = performance.now();
			await broker.observe(input);
			const used = process.cpuUsage(cpu);
			return { wall: performance.now() - started, cpu: (used.user + used.system) / 1000 };
		};
		// Warm-up windows start half a stride past the timed ones, so no timed input is seen twice.
		const warmup = bucket.warmup ?? 0;
		let coldFirstMs = 0;
		for (let round = 0; round < warmup; round++) {
			progress(`speed ${bucket.label} warm-up ${round + 1}/${warmup}`);
			const input = await inputFor(round + 0.5);
			const timing = await time((await session(`speed-${bucket.bytes}-warmup-${round}`)).broker, input);
			if (round === 0) coldFirstMs = timing.wall;
		}
		const fresh: Timing[] = [];
		const selectedBefore = selectedOnThread();
		for (let sample = 0; sample < bucket.samples; sample++) {
			progress(`speed ${bucket.label} ${sample + 1}/${bucket.samples} (fresh sessions)`);
			const input = await inputFor(sample);
			fresh.push(await time((await session(`speed-${bucket.bytes}-${sample}`)).broker, input));
		}
		const onThread = selectedOnThread() - selectedBefore;
		const same: number[] = [];
		if (!bucket.file) {
			const shared = (await session(`speed-${bucket.bytes}-shared`)).broker;
			for (let sample = 0; sample < bucket.samples; sample++) {
				progress(`speed ${bucket.label} ${sample + 1}/${bucket.samples} (one session)`);
				same.push((await time(shared, await inputFor(sample))).wall);
			}
		}
		await rm(file, { force: true });
		const wall = fresh.map((t) => t.wall).sort((a, b) => a - b);
		const cpu = fresh.map((t) => t.cpu).sort((a, b) => a - b);
		same.sort((a, b) => a - b);
		const p50 = percentile(wall, 0.5);
		results.push({
			label: bucket.label,
			bytes: bucket.bytes,
			samples: bucket.samples,
			source: bucket.file ? "file" : "text",
			p50Ms: round(p50),
			p95Ms: round(percentile(wall, 0.95)),
			maxMs: round(wall[wall.length - 1]),
			cpuP50Ms: round(percentile(cpu, 0.5)),
			cpuP95Ms: round(percentile(cpu, 0.95)),
			p50MsPerMiB: round(p50 / (bucket.bytes / (1024 * 1024))),
			sameSession: {
				p50Ms: round(percentile(same, 0.5)),
				p95Ms: round(percentile(same, 0.95)),
				maxMs: round(same[same.length - 1] ?? 0),
			},
			warmup,
			coldFirstMs: round(coldFirstMs),
			onThread,
		});
	}
	return {
		buckets: results,
		maxRssKiBBefore,
		maxRssKiBAfter: process.resourceUsage().maxRSS,
		loadAverageBefore,
		loadAverageAfter: loadavg().map(round),
		referenceMsBefore,
		referenceMsAfter: referenceMs(),
	};
}

const round = (value: number) => Math.round(value * 100) / 100;
