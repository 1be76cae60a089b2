import { type CachePrices, type CacheRatios, cacheRatios, PRICE_RATIOS as PRICES } from "prime-agent-context";

/**
 * What a provider bills for a replayed run, with prompt caching. Each call re-sends the whole
 * history; the part identical to the previous call's prompt (message by message, from the start) is
 * read from the cache, the rest is new input. A policy that rewrites an old message (masking it)
 * breaks the cached prefix there, and everything after it is billed as new again.
 *
 * Prices are in units of the provider's plain input price per token:
 * - Anthropic: cache read 0.1x, cache write 1.25x (every call writes its new tail to the cache);
 * - OpenAI: cached input 0.5x (the most expensive published ratio; newer models bill less), no write premium.
 * Output tokens are the same for every arm and left out; the cache is assumed warm between calls.
 */
export const PRICE_RATIOS = {
	anthropic: ratiosOf(PRICES.anthropic),
	openai: ratiosOf(PRICES.openai),
} as const;

/** The ratios of published cache prices (the ones the agent's ageing plans with). */
function ratiosOf(prices: CachePrices): CacheRatios {
	const ratios = cacheRatios(prices);
	if (!ratios) throw new Error("published cache prices have a cache read price");
	return ratios;
}

/** One message of a call's prompt: what it is (equal keys mean identical content) and its tokens. */
export interface PromptMessage {
	key: string;
	tokens: number;
}

export interface RunBilling {
	/** Input tokens summed over calls (every call's whole prompt). */
	inputTokens: number;
	/** Of those, tokens in a prefix identical to the previous call's prompt. */
	cachedTokens: number;
	/** The largest single prompt of the run: what forces compaction when it nears the window. */
	peakPromptTokens: number;
	/** Cost in input-price units at each provider's ratios. */
	cost: { anthropic: number; openai: number };
}

/** Bills a run given each call's prompt, in call order. */
export function billRun(calls: readonly (readonly PromptMessage[])[]): RunBilling {
	let inputTokens = 0;
	let cachedTokens = 0;
	let peak = 0;
	let previous: readonly PromptMessage[] = [];
	for (const prompt of calls) {
		let total = 0;
		let cached = 0;
		let sharing = true;
		for (const [index, message] of prompt.entries()) {
			total += message.tokens;
			if (sharing && previous[index]?.key === message.key) cached += message.tokens;
			else sharing = false;
		}
		inputTokens += total;
		cachedTokens += cached;
		peak = Math.max(peak, total);
		previous = prompt;
	}
	const fresh = inputTokens - cachedTokens;
	const cost = (ratio: { read: number; write: number }) => cachedTokens * ratio.read + fresh * ratio.write;
	return {
		inputTokens,
		cachedTokens,
		peakPromptTokens: peak,
		cost: { anthropic: cost(PRICE_RATIOS.anthropic), openai: cost(PRICE_RATIOS.openai) },
	};
}
