/** Size of what a model sees: UTF-8 bytes and o200k tokens (the GPT-4o / GPT-5 tokenizer). */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

export function bytesOf(text: string): number {
	return Buffer.byteLength(text, "utf8");
}

export function tokensOf(text: string): number {
	return text.length === 0 ? 0 : countTokens(text);
}

/** Distribution of a figure over observations. */
export interface Distribution {
	count: number;
	total: number;
	median: number;
	p90: number;
	max: number;
}

/** Nearest-rank percentile of sorted values (`q` in 0..1). */
export function percentile(sorted: number[], q: number): number {
	if (sorted.length === 0) return 0;
	const rank = Math.max(1, Math.ceil(q * sorted.length));
	return sorted[Math.min(sorted.length, rank) - 1];
}

export function distribution(values: number[]): Distribution {
	const sorted = [...values].sort((a, b) => a - b);
	return {
		count: sorted.length,
		total: sorted.reduce((sum, value) => sum + value, 0),
		median: percentile(sorted, 0.5),
		p90: percentile(sorted, 0.9),
		max: sorted.length > 0 ? sorted[sorted.length - 1] : 0,
	};
}
