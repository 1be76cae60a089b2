import { describe, expect, it } from "vitest";
import type { RecoveryCheck } from "../arms/index.js";
import { distribution } from "../measure/size.js";
import type { AgeingFigures, TrajectoryArmResult } from "../run/trajectories.js";
import { trajectoryTargets } from "./verdict.js";

/** A replay row with the figures the targets read; the rest empty. */
function arm(name: string, anthropic: number, openai: number, peakMedian: number): TrajectoryArmResult {
	return {
		arm: name,
		rule: "",
		runs: 1,
		observations: 1,
		bytes: distribution([]),
		tokens: distribution([]),
		cumulativePromptTokens: 0,
		cumulativeObservationTokens: 0,
		perRunPromptTokens: distribution([]),
		cachedPromptTokens: 0,
		cost: { anthropic, openai },
		peakPromptTokens: distribution([peakMedian]),
		perRun: [],
		viewsLargerThanInput: 0,
	};
}

function replay(
	prices: AgeingFigures["prices"],
	remaining: AgeingFigures["remaining"],
	peak: number,
	aged: number,
	exact: number,
): AgeingFigures {
	return {
		prices,
		remaining,
		cumulativePromptTokens: 0,
		cachedPromptTokens: 0,
		cost: 0,
		peakPromptTokens: distribution([peak]),
		aged,
		agedByteExact: exact,
		agedMismatches: [],
		repeatedCommands: 0,
		moments: 0,
		calls: 0,
	};
}

const recovery: RecoveryCheck = {
	observations: 10,
	byteExact: 10,
	mismatches: [],
	notArchived: [],
	search: {
		failingIds: { found: 0, total: 0, missing: [] },
		errorTypes: { found: 0, total: 0, missing: [] },
		locations: { found: 0, total: 0, missing: [] },
	},
	decisions: { "pass-through": 10, "structured-capsule": 0, "delta-capsule": 0 },
	archiveDiskBytes: 0,
	inputBytes: 0,
};

/** Raw, block masking and our arm with ageing: costs at Anthropic's and OpenAI's ratios, peaks per replay. */
function corpus(ours: { anthropic: number; openai: number; peaks: [number, number]; aged: number; exact: number }) {
	return [
		arm("raw", 1000, 1000, 200),
		arm("block-masking", 940, 710, 150),
		arm("prime-context-no-ageing", 937, 937, 190),
		{
			...arm("prime-context", ours.anthropic, ours.openai, ours.peaks[0]),
			ageing: {
				window: 5,
				replays: [
					replay("anthropic", "estimated", ours.peaks[0], ours.aged, ours.exact),
					replay("openai", "estimated", ours.peaks[1], 0, 0),
					replay("anthropic", "true", 999, 0, 0),
				],
			},
		},
	];
}

const verdicts = (list: ReturnType<typeof trajectoryTargets>) =>
	list.map((t) => `${t.met ? "met" : "MISSED"} ${t.target}: ${t.measured}`);

describe("trajectory targets", () => {
	it("are met when our arm is cheapest at both ratios, under both ceilings, no larger at its peak, every aged output read back", () => {
		const list = trajectoryTargets(
			corpus({ anthropic: 930, openai: 720, peaks: [150, 140], aged: 4, exact: 4 }),
			recovery,
		);
		expect(verdicts(list)).toEqual([
			"met lowest cost of every arm at Anthropic's cache ratios (trajectories): 930; next prime-context-no-ageing 937",
			"met cost <= 0.93x raw at Anthropic's cache ratios (trajectories): 0.930x",
			"MISSED lowest cost of every arm at OpenAI's cache ratios (trajectories): 720; next block-masking 710",
			"met cost <= 0.72x raw at OpenAI's cache ratios (trajectories): 0.720x",
			"met median peak prompt per run <= block masking's (trajectories): 150 priced at Anthropic's, 140 priced at OpenAI's; block masking 150",
			"met aged observations read back byte-exact from their stub's id = 100% (trajectories): 4/4 (over 3 replays)",
			"met recovery byte-exact = 100% (trajectories): 10/10",
		]);
	});

	it("are missed past a ceiling, by a peak above block masking's under either pricing, and by one aged output not read back", () => {
		const list = trajectoryTargets(corpus({ anthropic: 931, openai: 700, peaks: [151, 140], aged: 4, exact: 3 }), {
			...recovery,
			byteExact: 9,
		});
		expect(list.filter((t) => !t.met).map((t) => t.target)).toEqual([
			"cost <= 0.93x raw at Anthropic's cache ratios (trajectories)",
			"median peak prompt per run <= block masking's (trajectories)",
			"aged observations read back byte-exact from their stub's id = 100% (trajectories)",
			"recovery byte-exact = 100% (trajectories)",
		]);
	});

	it("count a replay that aged nothing as unmeasured, not as every aged output read back", () => {
		const list = trajectoryTargets(
			corpus({ anthropic: 900, openai: 700, peaks: [150, 140], aged: 0, exact: 0 }),
			recovery,
		);
		expect(verdicts(list)[5]).toBe(
			"MISSED aged observations read back byte-exact from their stub's id = 100% (trajectories): no observation aged",
		);
	});
});
