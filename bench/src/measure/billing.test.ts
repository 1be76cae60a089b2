import { describe, expect, it } from "vitest";
import { billRun, type PromptMessage } from "./billing.js";

const msg = (key: string, tokens: number): PromptMessage => ({ key, tokens });

describe("billRun", () => {
	it("reads an unchanged prefix from the cache and bills the new tail as a write", () => {
		const calls = [
			[msg("sys", 100)],
			[msg("sys", 100), msg("a0", 10), msg("v0", 50)],
			[msg("sys", 100), msg("a0", 10), msg("v0", 50), msg("a1", 10), msg("v1", 30)],
		];
		const bill = billRun(calls);
		expect(bill.inputTokens).toBe(100 + 160 + 200);
		expect(bill.cachedTokens).toBe(100 + 160);
		expect(bill.peakPromptTokens).toBe(200);
		// Anthropic: 260 read at 0.1, 200 written at 1.25; OpenAI: 260 at 0.5, 200 at 1.
		expect(bill.cost.anthropic).toBeCloseTo(26 + 250, 9);
		expect(bill.cost.openai).toBeCloseTo(130 + 200, 9);
	});

	it("bills everything after a rewritten message as new, although the rewrite made the prompt smaller", () => {
		const kept = billRun([
			[msg("sys", 100), msg("v0", 1000)],
			[msg("sys", 100), msg("v0", 1000), msg("v1", 10)],
		]);
		const masked = billRun([
			[msg("sys", 100), msg("v0", 1000)],
			[msg("sys", 100), msg("v0-masked", 5), msg("v1", 10)],
		]);
		expect(masked.inputTokens).toBe(1100 + 115);
		expect(masked.cachedTokens).toBe(100);
		expect(masked.inputTokens).toBeLessThan(kept.inputTokens);
		expect(kept.cost.anthropic).toBeCloseTo(1100 * 1.25 + 1100 * 0.1 + 10 * 1.25, 9);
		expect(masked.cost.anthropic).toBeCloseTo(1100 * 1.25 + 100 * 0.1 + 15 * 1.25, 9);
	});
});
