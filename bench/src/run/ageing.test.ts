import { PRICE_RATIOS } from "prime-agent-context";
import { describe, expect, it } from "vitest";
import { billRun } from "../measure/billing.js";
import {
	type AgeableObservation,
	estimatedRemaining,
	repeatsOfAged,
	replayWithAgeing,
	trueRemaining,
} from "./ageing.js";

/** `n` observations of 1,000 tokens with stubs of 40, each from its own command. */
const observations = (n: number): AgeableObservation[] =>
	Array.from({ length: n }, (_, i) => ({ tokens: 1000, stubTokens: 40, testCommand: null, command: `cmd ${i}` }));

/** A run of `calls` calls (assistant messages of 10 tokens, a fixed part of 100) and a window of 2. */
function replay(
	observed: AgeableObservation[],
	calls: number,
	prices: keyof typeof PRICE_RATIOS,
	remaining = estimatedRemaining,
) {
	return replayWithAgeing({
		fixedTokens: 100,
		assistantTokens: Array(calls).fill(10),
		observations: observed,
		prices: PRICE_RATIOS[prices],
		window: 2,
		remaining,
	});
}

describe("trajectory replay with ageing", () => {
	it("at OpenAI's ratios ages each observation as it leaves the window; aged ones stay aged under new keys", () => {
		const run = replay(observations(6), 7, "openai");
		// Call 3 sees 3 observations: v0 leaves the window of 2. Removing 960 tokens over this call and
		// the 3 estimated to come (0.5 × 960 × 4 = 1,920) pays for re-sending v0's stub, a1 and v1
		// (1,050 × 0.5 = 525).
		expect(run.agedAt).toEqual([3, 4, 5, 6, null, null]);
		expect(run.moments).toBe(4);
		expect(run.calls[4]?.map((message) => message.key)).toEqual([
			"fixed",
			"a0",
			"s0",
			"a1",
			"s1",
			"a2",
			"v2",
			"a3",
			"v3",
		]);
		const bill = billRun(run.calls);
		// Prompts 100, 1,110, 2,120, 2,170, 2,220, 2,270, 2,320; cached 0, 100, 1,110, then only
		// up to the newly aged stub: 110, 160, 210, 260.
		expect(bill.inputTokens).toBe(12_310);
		expect(bill.cachedTokens).toBe(1_950);
		expect(bill.cost.openai).toBe(1_950 * 0.5 + 10_360);
		// Without ageing the same run bills 15,750 cached and 6,160 new tokens at OpenAI's ratios.
		expect(bill.cost.openai).toBeLessThan(15_750 * 0.5 + 6_160);
	});

	it("at Anthropic's ratios waits until the calls to come pay for the re-write, then ages all that is due at once", () => {
		const run = replay(observations(6), 7, "anthropic");
		// Call 4 (2 candidates, 4 calls to come): 1,920 × 0.1 × 5 = 960 < 1,100 × 1.15. Call 5:
		// 2,880 × 0.1 × 6 = 1,728 > 1,150 × 1.15 = 1,322.5.
		expect(run.agedAt).toEqual([5, 5, 5, null, null, null]);
		expect(run.moments).toBe(1);
	});

	it("with the true calls to come (the oracle) ages earlier in a long run and costs less than the estimate", () => {
		const oracle = replay(observations(20), 21, "anthropic", trueRemaining);
		const estimate = replay(observations(20), 21, "anthropic");
		// At call 3, 17 calls follow: 960 × 0.1 × 18 = 1,728 > 1,050 × 1.15 = 1,207.5.
		expect(oracle.agedAt.slice(0, 6)).toEqual([3, 4, 5, 6, 7, 8]);
		expect(oracle.agedAt.slice(12)).toEqual(Array(8).fill(null));
		expect(estimate.agedAt.slice(0, 3)).toEqual([5, 5, 5]);
		expect(billRun(oracle.calls).cost.anthropic).toBeCloseTo(41_693, 6);
		expect(billRun(estimate.calls).cost.anthropic).toBeCloseTo(44_910, 6);
	});

	it("never ages an observation that was not archived (it has no id to read back)", () => {
		const observed = observations(6);
		observed[0] = { ...(observed[0] as AgeableObservation), stubTokens: null };
		const run = replay(observed, 7, "openai");
		expect(run.agedAt).toEqual([null, 4, 5, 6, null, null]);
		expect(run.calls[6]?.map((message) => message.key).filter((key) => /^[sv]/.test(key))).toEqual([
			"v0",
			"s1",
			"s2",
			"s3",
			"v4",
			"v5",
		]);
	});

	it("keeps the newest result of a test command in the prompt", () => {
		const observed = observations(6).map((observation, i) =>
			i < 2 ? { ...observation, testCommand: "pytest" } : observation,
		);
		expect(replay(observed, 7, "openai").agedAt).toEqual([3, null, 5, 6, null, null]);
	});

	it("counts the later commands that repeat the command of an observation aged by then", () => {
		const observed = ["ls", "pytest", "ls", "cat a", "pytest", " ls "].map(
			(command): AgeableObservation => ({ tokens: 1000, stubTokens: 40, testCommand: null, command }),
		);
		// "ls" (0) is aged from call 1: commands 2 and 5 repeat it. "pytest" (1) is aged only at call 5, after command 4.
		expect(repeatsOfAged(observed, [1, 5, null, null, null, null])).toBe(2);
		expect(repeatsOfAged(observed, [3, 5, null, null, null, null])).toBe(1);
		expect(repeatsOfAged(observed, [null, null, null, null, null, null])).toBe(0);
	});
});
