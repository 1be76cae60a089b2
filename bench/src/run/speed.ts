/**
 * Broker time per observation by size bucket. Inputs are windows of real fixture text (the
 * labelled outputs concatenated, repeated when needed) cut at a line end to each bucket's size;
 * every sample starts at a different place so the broker sees distinct outputs. Each bucket is
 * timed twice: every sample in a fresh session (the cost of one observation by its size), then all
 * samples in one session (later observations are also compared with the earlier ones).
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
	/** The same samples observed one after another in a single session. */
	sameSession: { p50Ms: number; p95Ms: number; maxMs: number };
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
		const stride = Math.floor(source.length / bucket.samples) + 7_919;
		const texts = Array.from({ length: bucket.samples }, (_, sample) =>
			windowOf(source, sample * stride, bucket.bytes),
		);
		const time = async (broker: ObservationBroker, text: string) => {
			const started = performance.now();
			await broker.observe({ tool: "bash", text, isError: false, exitCode: 0, command: "cat output.log" });
			return performance.now() - started;
		};
		const fresh: number[] = [];
		for (const [sample, text] of texts.entries()) {
			progress(`speed ${bucket.label} ${sample + 1}/${bucket.samples} (fresh sessions)`);
			fresh.push(await time((await session(`speed-${bucket.bytes}-${sample}`)).broker, text));
		}
		const shared = (await session(`speed-${bucket.bytes}-shared`)).broker;
		const same: number[] = [];
		for (const [sample, text] of texts.entries()) {
			progress(`speed ${bucket.label} ${sample + 1}/${bucket.samples} (one session)`);
			same.push(await time(shared, text));
		}
		fresh.sort((a, b) => a - b);
		same.sort((a, b) => a - b);
		const p50 = percentile(fresh, 0.5);
		results.push({
			label: bucket.label,
			bytes: bucket.bytes,
			samples: bucket.samples,
			p50Ms: round(p50),
			p95Ms: round(percentile(fresh, 0.95)),
			maxMs: round(fresh[fresh.length - 1]),
			p50MsPerMiB: round(p50 / (bucket.bytes / (1024 * 1024))),
			sameSession: {
				p50Ms: round(percentile(same, 0.5)),
				p95Ms: round(percentile(same, 0.95)),
				maxMs: round(same[same.length - 1]),
			},
		});
	}
	return { buckets: results, maxRssKiBBefore, maxRssKiBAfter: process.resourceUsage().maxRSS };
}

const round = (value: number) => Math.round(value * 100) / 100;
