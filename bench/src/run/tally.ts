/** A trajectory arm's figures, summed over the corpus run by run. */
import type { Arm } from "../arms/index.js";
import type { PromptMessage, RunBilling } from "../measure/billing.js";
import { type Distribution, distribution } from "../measure/size.js";
import type { AgeingFigures } from "./ageing-replays.js";

export interface TrajectoryArmResult {
	arm: string;
	rule: string;
	runs: number;
	observations: number;
	/** Per observation, the view when first shown. */
	bytes: Distribution;
	tokens: Distribution;
	/** Sum over all runs of every call's prompt tokens. */
	cumulativePromptTokens: number;
	/** The observation part of that sum. */
	cumulativeObservationTokens: number;
	/** Per run cumulative prompt tokens. */
	perRunPromptTokens: Distribution;
	/** Of the cumulative prompt tokens, those in a prefix identical to the previous call's (cache reads). */
	cachedPromptTokens: number;
	/** Cache-aware cost of all runs, in input-price units (see `PRICE_RATIOS`). */
	cost: { anthropic: number; openai: number };
	/** Per run, its largest single prompt. */
	peakPromptTokens: Distribution;
	/** Every run's figures, in corpus order. */
	perRun: {
		id: string;
		calls: number;
		promptTokens: number;
		observationTokens: number;
		peakPromptTokens: number;
		cost: { anthropic: number; openai: number };
	}[];
	viewsLargerThanInput: number;
	/**
	 * The arm with ageing: each cost column comes from a replay whose ageing was priced with that
	 * column's ratios; the token and peak figures above are those of the Anthropic-priced replay (it
	 * ages the least). Every replay is listed, with the oracle's (the true remaining calls).
	 */
	ageing?: { window: number; replays: AgeingFigures[] };
}

/** Tokens of the observation messages (views `v`, masked `m`, aged `s`) of every call. */
export function observationTokensOf(calls: readonly (readonly PromptMessage[])[]): number {
	let sum = 0;
	for (const prompt of calls) for (const message of prompt) if (/^[vms]\d/.test(message.key)) sum += message.tokens;
	return sum;
}

/** One row's sums over the corpus. */
export class Tally {
	private readonly viewBytes: number[] = [];
	private readonly viewTokens: number[] = [];
	private readonly perRun: TrajectoryArmResult["perRun"] = [];
	private larger = 0;
	private cached = 0;

	view(bytes: number, tokens: number, largerThanInput: boolean): void {
		this.viewBytes.push(bytes);
		this.viewTokens.push(tokens);
		if (largerThanInput) this.larger++;
	}

	/** A replayed run: its bill, its observation tokens, and the cost of each column (from the bill unless priced apart). */
	run(id: string, calls: number, bill: RunBilling, observationTokens: number, cost: RunBilling["cost"]): void {
		this.cached += bill.cachedTokens;
		this.perRun.push({
			id,
			calls,
			promptTokens: bill.inputTokens,
			observationTokens,
			peakPromptTokens: bill.peakPromptTokens,
			cost,
		});
	}

	result(arm: Arm, runs: number): TrajectoryArmResult {
		const sum = (pick: (run: TrajectoryArmResult["perRun"][number]) => number) =>
			this.perRun.reduce((total, run) => total + pick(run), 0);
		return {
			arm: arm.name,
			rule: arm.rule,
			runs,
			observations: this.viewTokens.length,
			bytes: distribution(this.viewBytes),
			tokens: distribution(this.viewTokens),
			cumulativePromptTokens: sum((run) => run.promptTokens),
			cumulativeObservationTokens: sum((run) => run.observationTokens),
			perRunPromptTokens: distribution(this.perRun.map((run) => run.promptTokens)),
			cachedPromptTokens: this.cached,
			cost: { anthropic: sum((run) => run.cost.anthropic), openai: sum((run) => run.cost.openai) },
			peakPromptTokens: distribution(this.perRun.map((run) => run.peakPromptTokens)),
			perRun: this.perRun,
			viewsLargerThanInput: this.larger,
		};
	}
}
