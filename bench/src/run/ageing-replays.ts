/**
 * An ageing arm's replays over the corpus: its ageing priced at each cost column's ratios, with the
 * agent's estimate of the calls to come and with the true ones (the oracle), each billed in its
 * column; every aged observation read back from the archive id its stub names.
 */
import { PRICE_RATIOS as AGEING_PRICES } from "prime-agent-context";
import type { AgeingRun, Arm } from "../arms/index.js";
import type { Trajectory } from "../corpus/index.js";
import { billRun, type PRICE_RATIOS, type RunBilling } from "../measure/billing.js";
import { type Distribution, distribution } from "../measure/size.js";
import {
	type AgeableObservation,
	estimatedRemaining,
	repeatsOfAged,
	replayWithAgeing,
	trueRemaining,
} from "./ageing.js";
import { observationTokensOf, Tally, type TrajectoryArmResult } from "./tally.js";

/** One replay of an ageing arm over the corpus. */
export interface AgeingFigures {
	/** The cache ratios the ageing was planned with, and the cost column it is billed in. */
	prices: PriceColumn;
	/** `estimated`: the agent's estimate of the calls to come; `true`: the calls that really followed (oracle). */
	remaining: "estimated" | "true";
	cumulativePromptTokens: number;
	cachedPromptTokens: number;
	/** Cost at the ratios it was planned with, in input-price units. */
	cost: number;
	peakPromptTokens: Distribution;
	/** Observations aged by the end of their run, over all runs. */
	aged: number;
	/** Of those, read back byte-exact from the archive id their stub names. */
	agedByteExact: number;
	/** Aged observations whose read-back failed or differed. */
	agedMismatches: string[];
	/** Later commands of a run repeating the command of an observation aged by then. */
	repeatedCommands: number;
	/** Calls at which something was aged, and all calls. */
	moments: number;
	calls: number;
}

type PriceColumn = keyof typeof PRICE_RATIOS;

/** The replays, in report order. */
const REPLAYS: { prices: PriceColumn; remaining: AgeingFigures["remaining"] }[] = [
	{ prices: "anthropic", remaining: "estimated" },
	{ prices: "openai", remaining: "estimated" },
	{ prices: "anthropic", remaining: "true" },
	{ prices: "openai", remaining: "true" },
];

/** A run as the replays need it: token counts, each observation's stub, and the archive to read back from. */
export interface AgeableRun {
	trajectory: Trajectory;
	fixedTokens: number;
	assistantTokens: number[];
	observations: AgeableObservation[];
	/** Per observation, its stub's text (null when it was not archived). */
	stubs: (string | null)[];
	archive: AgeingRun;
}

/** Sums of an ageing arm, run by run; `result` gives its row. */
export class AgeingReplays {
	/** The arm's row: each cost column from its own estimated replay, tokens and peaks from the Anthropic-priced one. */
	private readonly tally = new Tally();
	private readonly replays = REPLAYS.map((replay) => ({ ...replay, ...emptySums() }));

	constructor(private readonly window: number) {}

	async add(run: AgeableRun): Promise<void> {
		const bills = new Map<PriceColumn, { bill: RunBilling; observationTokens: number }>();
		const readBack = new Map<string, Promise<Buffer | Error>>();
		for (const figures of this.replays) {
			const replay = replayWithAgeing({
				fixedTokens: run.fixedTokens,
				assistantTokens: run.assistantTokens,
				observations: run.observations,
				prices: AGEING_PRICES[figures.prices],
				window: this.window,
				remaining: figures.remaining === "true" ? trueRemaining : estimatedRemaining,
			});
			const bill = billRun(replay.calls);
			if (figures.remaining === "estimated") {
				bills.set(figures.prices, { bill, observationTokens: observationTokensOf(replay.calls) });
			}
			figures.cumulativePromptTokens += bill.inputTokens;
			figures.cachedPromptTokens += bill.cachedTokens;
			figures.cost += bill.cost[figures.prices];
			figures.peaks.push(bill.peakPromptTokens);
			figures.repeatedCommands += repeatsOfAged(run.observations, replay.agedAt);
			figures.moments += replay.moments;
			figures.calls += run.assistantTokens.length;
			for (const [index, when] of replay.agedAt.entries()) {
				if (when === null) continue;
				figures.aged++;
				const problem = await readsBack(run, index, readBack);
				if (problem === null) figures.agedByteExact++;
				else figures.agedMismatches.push(problem);
			}
		}
		const anthropic = bills.get("anthropic");
		const openai = bills.get("openai");
		if (!anthropic || !openai) return;
		this.tally.run(run.trajectory.id, run.assistantTokens.length, anthropic.bill, anthropic.observationTokens, {
			anthropic: anthropic.bill.cost.anthropic,
			openai: openai.bill.cost.openai,
		});
	}

	/** The arm's row, its views' figures taken from `base` (the same broker views without ageing). */
	result(arm: Arm, base: TrajectoryArmResult): TrajectoryArmResult {
		return {
			...this.tally.result(arm, base.runs),
			observations: base.observations,
			bytes: base.bytes,
			tokens: base.tokens,
			viewsLargerThanInput: base.viewsLargerThanInput,
			rule: `${arm.rule}; old observations aged to a one-line stub when it pays (planAgeing, window ${this.window}), priced with the ratios of each cost column`,
			ageing: {
				window: this.window,
				replays: this.replays.map(({ peaks, ...figures }) => ({ ...figures, peakPromptTokens: distribution(peaks) })),
			},
		};
	}
}

/**
 * Reads aged observation `index` back from the archive id its stub names; null when it gives the
 * recorded output byte for byte, else what went wrong. Each id is read once per run.
 */
async function readsBack(
	run: AgeableRun,
	index: number,
	cache: Map<string, Promise<Buffer | Error>>,
): Promise<string | null> {
	const id = /^\[aged\] (obs_\d+) /.exec(run.stubs[index] ?? "")?.[1];
	if (id === undefined) return `${run.trajectory.id}/observation ${index}: its stub names no archive id`;
	let back = cache.get(id);
	if (back === undefined) {
		back = run.archive.readBytes(id).catch((error: Error) => error);
		cache.set(id, back);
	}
	const bytes = await back;
	const original = Buffer.from(run.trajectory.steps[index]?.observation ?? "", "utf8");
	if (bytes instanceof Error) return `${run.trajectory.id}/${id}: ${bytes.message}`;
	return bytes.equals(original)
		? null
		: `${run.trajectory.id}/${id}: read back ${bytes.length} bytes, recorded ${original.length}`;
}

/** A replay's sums while the corpus is replayed (its peaks become a distribution at the end). */
function emptySums(): Omit<AgeingFigures, "prices" | "remaining" | "peakPromptTokens"> & { peaks: number[] } {
	return {
		cumulativePromptTokens: 0,
		cachedPromptTokens: 0,
		cost: 0,
		peaks: [],
		aged: 0,
		agedByteExact: 0,
		agedMismatches: [],
		repeatedCommands: 0,
		moments: 0,
		calls: 0,
	};
}
