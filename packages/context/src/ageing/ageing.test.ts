import { describe, expect, it } from "vitest";
import { type AgeingItem, estimateRemainingCalls, planAgeing } from "./plan.js";
import { cacheRatios, PRICE_RATIOS } from "./prices.js";
import { isAgedStub, renderAgedStub } from "./stub.js";

/** An assistant message of `tokens`. */
const said = (tokens: number): AgeingItem => ({ tokens });
/** An archived observation of `tokens`, with a stub of 40. */
const seen = (tokens: number, extra: Partial<NonNullable<AgeingItem["observation"]>> = {}): AgeingItem => ({
	tokens,
	observation: { stubTokens: 40, aged: false, testCommand: null, readBack: false, ...extra },
});
/** A run of `n` calls: each an assistant message and its observation of `size` tokens. */
function run(n: number, size: number): AgeingItem[] {
	return Array.from({ length: n }, () => [said(100), seen(size)]).flat();
}
const base = { cachedItems: 0, cacheCold: false, window: 5 };

describe("ageing: when it pays", () => {
	it("ages at OpenAI's ratios when removed × (1 + calls to come) exceeds the suffix it re-bills, and not before", () => {
		// 8 observations of 1,000 tokens; the window keeps the newest 5, so 3 may go: removed 3 × 960.
		const items = run(8, 1000);
		const cachedItems = items.length;
		// Cut at the first (index 1): suffix = 3 stubs + 5 observations + 7 assistants = 120 + 5,000 + 700 = 5,820 tokens.
		// Gain = 2,880 × 0.5 × (1 + R) − 5,820 × 0.5: pays from R = 2 on (2,880 × 3 = 8,640 > 5,820), not at R = 1 (5,760).
		const at = (remainingCalls: number) =>
			planAgeing({ ...base, items, prices: PRICE_RATIOS.openai, cachedItems, remainingCalls });
		expect(at(1).age).toEqual([]);
		const paying = at(2);
		expect(paying.age).toEqual([1, 3, 5]);
		expect(paying.reason).toBe("pays");
		expect(paying.removedTokens).toBe(2880);
		expect(paying.rebilledTokens).toBe(5820);
		expect(paying.gain).toBe(2880 * 0.5 * 3 - 5820 * 0.5);
	});

	it("needs about ten times as many calls to come at Anthropic's ratios (read 0.1, write 1.25)", () => {
		const items = run(8, 1000);
		const at = (remainingCalls: number) =>
			planAgeing({ ...base, items, prices: PRICE_RATIOS.anthropic, cachedItems: items.length, remainingCalls });
		// Gain = 2,880 × 0.1 × (1 + R) − 5,820 × 1.15 = 288 (1 + R) − 6,693: pays from R = 23 on.
		expect(at(22).age).toEqual([]);
		expect(at(23).age).toEqual([1, 3, 5]);
	});

	it("keeps the cut where the gain is largest: a small old observation is not worth re-billing a large suffix", () => {
		// Old: one observation of 100 tokens (saves 60), then two of 10,000 (save 9,960 each), then the window.
		const items = [said(100), seen(100), said(100), seen(10_000), said(100), seen(10_000), ...run(5, 1000)];
		const plan = planAgeing({
			...base,
			items,
			prices: PRICE_RATIOS.anthropic,
			cachedItems: items.length,
			remainingCalls: 10,
		});
		expect(plan.age).toEqual([3, 5]);
	});

	it("never counts the new tail as re-billed: it is billed as new whatever happens", () => {
		const items = run(8, 1000);
		// Only the first 4 items were in the previous call: cutting at index 1 re-bills items 1..3 (stub 40 + 100 + stub 40... ) only.
		const plan = planAgeing({ ...base, items, prices: PRICE_RATIOS.anthropic, cachedItems: 4, remainingCalls: 1 });
		expect(plan.age).toEqual([1, 3, 5]);
		expect(plan.rebilledTokens).toBe(40 + 100 + 40);
	});

	it("ages everything past the window on a model with no cache prices, and when the cache is cold, at no re-billing", () => {
		const items = run(8, 1000);
		const uncached = planAgeing({
			...base,
			items,
			prices: { input: 3, cacheRead: 0, cacheWrite: 0 },
			remainingCalls: 0,
		});
		expect(uncached).toMatchObject({ age: [1, 3, 5], reason: "uncached", rebilledTokens: 0 });
		expect(planAgeing({ ...base, items, prices: null, remainingCalls: 0 }).reason).toBe("uncached");
		const cold = planAgeing({
			...base,
			items,
			prices: PRICE_RATIOS.anthropic,
			cachedItems: items.length,
			remainingCalls: 0,
			cacheCold: true,
		});
		expect(cold).toMatchObject({ age: [1, 3, 5], reason: "cold-cache", rebilledTokens: 0, removedTokens: 2880 });
	});

	it("never ages the window, the newest result of each test command, what was read back, or what is already aged", () => {
		const items = [
			said(100),
			seen(1000, { testCommand: "pytest -q" }),
			said(100),
			seen(1000, { testCommand: "pytest -q" }),
			said(100),
			seen(1000, { testCommand: "npm test" }),
			said(100),
			seen(1000, { readBack: true }),
			said(100),
			seen(1000, { aged: true }),
			said(100),
			seen(1000),
			...run(5, 1000),
		];
		const plan = planAgeing({ ...base, items, prices: null, remainingCalls: 0 });
		// The older pytest result goes; the newest pytest and npm test results, the read-back and the aged one stay.
		expect(plan.age).toEqual([1, 11]);
		const wider = planAgeing({ ...base, items, prices: null, remainingCalls: 0, window: 7 });
		expect(wider.age).toEqual([1]);
		expect(planAgeing({ ...base, items: run(5, 1000), prices: null, remainingCalls: 9 }).age).toEqual([]);
	});

	it("does not age an observation whose stub would be more than half its size", () => {
		const items = [said(100), seen(79), said(100), seen(80), ...run(5, 1000)];
		expect(planAgeing({ ...base, items, prices: null, remainingCalls: 0 }).age).toEqual([3]);
	});

	it("reads pi-ai's prices: no write price is plain input; the estimate of calls to come is the calls so far", () => {
		expect(cacheRatios({ input: 4, cacheRead: 0.4, cacheWrite: 5 })).toEqual({ read: 0.1, write: 1.25 });
		expect(cacheRatios({ input: 2.5, cacheRead: 1.25, cacheWrite: 0 })).toEqual({ read: 0.5, write: 1 });
		expect(cacheRatios({ input: 0, cacheRead: 0, cacheWrite: 0 })).toBeNull();
		expect(estimateRemainingCalls(12)).toBe(12);
	});
});

describe("ageing: the stub", () => {
	it("names the id, the tool, the command's first line, the size, the outcome line and how to read it back, on one line", () => {
		const stub = renderAgedStub({
			id: "obs_000012",
			tool: "ipython",
			command: "\n%%bash\npytest -q tests/ 2>&1 | tail -50",
			bytes: 48213,
			lines: 812,
			headline: "TEST_RESULT FAIL 2 failed, 40 passed",
		});
		expect(stub).toBe(
			"[aged] obs_000012 · ipython · %%bash · 48,213 bytes, 812 lines · TEST_RESULT FAIL 2 failed, 40 passed · prime_context action=read id=obs_000012",
		);
		expect(isAgedStub(stub)).toBe(true);
	});

	it("cuts a long command and removes control characters; without a command or outcome it says what it knows", () => {
		const stub = renderAgedStub({
			id: "obs_000001",
			tool: "bash",
			command: `echo \u001b[31m${"x".repeat(200)}`,
			bytes: 10,
			lines: 1,
			headline: null,
		});
		expect(stub.split(" · ")[2]).toBe(`echo  [31m${"x".repeat(69)}…`);
		expect([...stub].some((char) => char.charCodeAt(0) < 32)).toBe(false);
		const bare = renderAgedStub({
			id: "obs_000002",
			tool: "ipython",
			command: null,
			bytes: 5,
			lines: 1,
			headline: null,
		});
		expect(bare).toBe("[aged] obs_000002 · ipython · 5 bytes, 1 lines · prime_context action=read id=obs_000002");
	});
});
