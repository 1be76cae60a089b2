/**
 * Broker time per observation by size bucket. Inputs are windows of real fixture text (the
 * labelled outputs concatenated, repeated when needed) cut at a line end to each bucket's size;
 * every sample starts at a different place so the broker sees distinct outputs.
 */
import { performance } from "node:perf_hooks";
import type { ObservationBroker, SessionArchive } from "prime-agent-context";
import { percentile } from "../measure/size.js";

export interface SpeedBucket {
	label: string;
	bytes: number;
	samples: number;
	p50Ms: number;
	p95Ms: number;
	maxMs: number;
	/** p50 divided by the size in MiB: flat across buckets when time is linear in size. */
	p50MsPerMiB: number;
}

export interface SpeedResult {
	buckets: SpeedBucket[];
	/** Peak resident set size of the process (KiB) before and after the timed runs. */
	maxRssKiBBefore: number;
	maxRssKiBAfter: number;
}

export const FULL_BUCKETS = [
	{ label: "1 KB", bytes: 1_024, samples: 200 },
	{ label: "100 KB", bytes: 100 * 1_024, samples: 50 },
	{ label: "1 MB", bytes: 1_024 * 1_024, samples: 20 },
	{ label: "10 MB", bytes: 10 * 1_024 * 1_024, samples: 5 },
];

export const SMOKE_BUCKETS = [
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

export async function runSpeed(
	texts: string[],
	buckets: { label: string; bytes: number; samples: number }[],
	session: (id: string) => Promise<{ archive: SessionArchive; broker: ObservationBroker }>,
	progress: (message: string) => void = () => {},
): Promise<SpeedResult> {
	const source = Buffer.from(texts.join("\n"), "utf8");
	const maxRssKiBBefore = process.resourceUsage().maxRSS;
	const results: SpeedBucket[] = [];
	for (const bucket of buckets) {
		const { broker } = await session(`speed-${bucket.bytes}`);
		const times: number[] = [];
		const stride = Math.floor(source.length / bucket.samples) + 7_919;
		for (let sample = 0; sample < bucket.samples; sample++) {
			progress(`speed ${bucket.label} ${sample + 1}/${bucket.samples}`);
			const text = windowOf(source, sample * stride, bucket.bytes);
			const started = performance.now();
			await broker.observe({ tool: "bash", text, isError: false, exitCode: 0, command: "cat output.log" });
			times.push(performance.now() - started);
		}
		times.sort((a, b) => a - b);
		const p50 = percentile(times, 0.5);
		results.push({
			label: bucket.label,
			bytes: bucket.bytes,
			samples: bucket.samples,
			p50Ms: round(p50),
			p95Ms: round(percentile(times, 0.95)),
			maxMs: round(times[times.length - 1]),
			p50MsPerMiB: round(p50 / (bucket.bytes / (1024 * 1024))),
		});
	}
	return { buckets: results, maxRssKiBBefore, maxRssKiBAfter: process.resourceUsage().maxRSS };
}

const round = (value: number) => Math.round(value * 100) / 100;
