/**
 * A model's input prices per token (any unit: pi-ai's are dollars per million), as pi-ai's
 * `model.cost` and models.json give them.
 */
export interface CachePrices {
	input: number;
	/** Price of an input token read from the provider's prompt cache; 0 when the model has no cache price. */
	cacheRead: number;
	/** Price of an input token written to the cache; 0 when writing costs no more than plain input (OpenAI). */
	cacheWrite: number;
}

/** Prices as multiples of the plain input price, or null for a model billed with no cache. */
export interface CacheRatios {
	read: number;
	write: number;
}

/**
 * The read and write prices relative to plain input. A model without a cache read price (or free
 * of charge) is treated as uncached: every call bills its whole prompt, so nothing cached is lost.
 */
export function cacheRatios(prices: CachePrices | null | undefined): CacheRatios | null {
	if (!prices || !(prices.input > 0) || !(prices.cacheRead > 0)) return null;
	const write = prices.cacheWrite > 0 ? prices.cacheWrite / prices.input : 1;
	return { read: prices.cacheRead / prices.input, write: Math.max(write, prices.cacheRead / prices.input) };
}

/** Anthropic's published ratios (cache read 0.1x, 5-minute cache write 1.25x) and OpenAI's highest (0.5x, no write premium). */
export const PRICE_RATIOS = {
	anthropic: { input: 1, cacheRead: 0.1, cacheWrite: 1.25 },
	openai: { input: 1, cacheRead: 0.5, cacheWrite: 0 },
} as const satisfies Record<string, CachePrices>;

/**
 * How long a provider keeps an unused prompt prefix cached. Anthropic's default cache lives 5
 * minutes, OpenAI's 5 to 10: past 5 idle minutes the next call re-bills its whole prompt anyway.
 */
export const CACHE_LIFETIME_MS = 5 * 60 * 1000;
