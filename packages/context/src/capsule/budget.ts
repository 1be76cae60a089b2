import type { ContextConfig } from "../types.js";

/** Sizes every capsule kind may use, after scaling for context usage. */
export interface CapsuleBudgets {
	/** Bytes at or above which a result becomes a structured capsule. */
	threshold: number;
	/** A normal large-output capsule. */
	large: number;
	/** Repetitive output: half of `large`. */
	repetitive: number;
	/** Medium results after the grace period, usage/help listings, trace bursts: at most 1.5 KiB. */
	compact: number;
	/** A clean success: at most 768 bytes. */
	clean: number;
}

/** The seed's floor: a capsule must keep its recovery boundary. */
export const MIN_CAPSULE_BYTES = 512;
/** Below this, a result is "small"; the grace rule covers results from here to the threshold. */
export const MEDIUM_RESULT_BYTES = 8 * 1024;
export const COMPACT_CAPSULE_BYTES = 1536;
export const CLEAN_CAPSULE_BYTES = 768;

/**
 * How budgets shrink as the context fills. Configured values are upper bounds, used as they are up
 * to 50% usage; from there the factor falls linearly to 0.5 at 90% usage and stays at 0.5 above:
 *
 *   usage:  <=0.5   0.6    0.7    0.8    >=0.9
 *   factor:  1.0    0.875  0.75   0.625  0.5
 */
export function contextScale(contextUsage: number | undefined): number {
	if (contextUsage === undefined || !Number.isFinite(contextUsage) || contextUsage <= 0.5) return 1;
	if (contextUsage >= 0.9) return 0.5;
	return 1 - (contextUsage - 0.5) * 1.25;
}

/**
 * Effective budgets for one observation. The threshold never drops below the medium-result bound
 * (or the configured threshold, when that is lower) and no capsule drops below 512 bytes.
 */
export function capsuleBudgets(config: ContextConfig, contextUsage?: number): CapsuleBudgets {
	const scale = contextScale(contextUsage);
	const threshold = Math.max(
		Math.min(config.minTextBytes, MEDIUM_RESULT_BYTES),
		Math.round(config.minTextBytes * scale),
	);
	const large = Math.max(MIN_CAPSULE_BYTES, Math.round(config.capsuleMaxBytes * scale));
	return {
		threshold,
		large,
		repetitive: Math.max(MIN_CAPSULE_BYTES, Math.floor(large / 2)),
		compact: Math.max(MIN_CAPSULE_BYTES, Math.min(COMPACT_CAPSULE_BYTES, large)),
		clean: Math.min(CLEAN_CAPSULE_BYTES, large),
	};
}
