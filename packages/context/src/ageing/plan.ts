/**
 * When ageing pays. Replacing an observation in the middle of the prompt by its stub breaks the
 * provider's cached prefix there: everything after it that the cache held is billed again at the
 * write price instead of the read price, once. What it saves is the removed tokens at the read
 * price on this call and on every call still to come. Ageing is planned so that it happens only
 * when the saving is larger, and all that is due goes at once (one break, not one per call).
 */
import { type CachePrices, cacheRatios } from "./prices.js";

/** One message of a prompt's history, as the plan sees it (the task snapshot is not history). */
export interface AgeingItem {
	/** Estimated tokens of the message as it is sent now (its stub's, once aged). */
	tokens: number;
	/** Present when the message is an archived observation, which a stub can stand for. */
	observation?: {
		/** Tokens of its stub. */
		stubTokens: number;
		/** Already replaced by its stub. */
		aged: boolean;
		/**
		 * The command that produced it when it reported a test result (`TEST_RESULT ...`): the newest
		 * result of each test command is never aged. Null otherwise.
		 */
		testCommand: string | null;
		/** The model read it back (named its id) in the last few calls: it stays. */
		readBack: boolean;
	};
}

export interface AgeingInput {
	items: readonly AgeingItem[];
	/** The model's prices; null or no cache price: uncached, where ageing always pays past the window. */
	prices: CachePrices | null;
	/**
	 * How many leading items the previous call sent exactly as they are now (what the provider holds
	 * cached). The items after them are new on this call and billed as new whatever happens.
	 */
	cachedItems: number;
	/** Calls still expected after this one (`estimateRemainingCalls` when unknown). */
	remainingCalls: number;
	/** The cache holds nothing of this prompt (idle past its lifetime, after a compaction or a model change). */
	cacheCold: boolean;
	/** The newest this many observations are never aged. */
	window: number;
	/** Age everything that may be aged, whatever it costs (the prompt must shrink before compacting). */
	force?: boolean;
}

export type AgeingReason = "cold-cache" | "uncached" | "pays" | "window-full";

export interface AgeingPlan {
	/** Indices of the items to replace by their stubs now, ascending; empty when nothing is due. */
	age: number[];
	reason: AgeingReason | null;
	/** Tokens the aged items no longer send, on every call from this one on. */
	removedTokens: number;
	/** Tokens this call bills at the write price that the cache would have read. */
	rebilledTokens: number;
	/** Saving net of the re-billing over the expected calls, in units of the plain input price. */
	gain: number;
}

const NOTHING: AgeingPlan = { age: [], reason: null, removedTokens: 0, rebilledTokens: 0, gain: 0 };

/**
 * Calls still expected after `callsSoFar`: as many as were made. A run that has lasted long is
 * likely to last long again, and one just started is not yet worth re-billing for.
 */
export function estimateRemainingCalls(callsSoFar: number): number {
	return Math.max(0, callsSoFar);
}

/** Whether a message may be aged at all: an archived observation whose stub is at most half its size. */
function ageable(item: AgeingItem): boolean {
	const observation = item.observation;
	return observation !== undefined && !observation.aged && item.tokens >= 2 * observation.stubTokens;
}

/** Indices of the observations that may be aged now: outside the window, not protected, worth a stub. */
export function ageingCandidates(items: readonly AgeingItem[], window: number): number[] {
	const observations = items.flatMap((item, index) => (item.observation ? [index] : []));
	const recent = new Set(observations.slice(Math.max(0, observations.length - window)));
	const newestTest = new Map<string, number>();
	for (const index of observations) {
		const command = items[index]?.observation?.testCommand;
		if (command) newestTest.set(command, index);
	}
	const protectedTests = new Set(newestTest.values());
	return observations.filter((index) => {
		const item = items[index] as AgeingItem;
		return !recent.has(index) && !protectedTests.has(index) && !item.observation?.readBack && ageable(item);
	});
}

/**
 * Decides which observations to age on this call. With a cold cache, an uncached model, or `force`,
 * every candidate goes (nothing cached is lost). Otherwise, for each possible first aged
 * position the plan ages every candidate from there on, and keeps the position of largest gain:
 * removed × read price × (this call + the calls still expected) − re-billed × (write − read price).
 * Nothing is aged unless that gain is positive.
 */
export function planAgeing(input: AgeingInput): AgeingPlan {
	const candidates = ageingCandidates(input.items, Math.max(0, input.window));
	if (candidates.length === 0) return NOTHING;
	const ratios = cacheRatios(input.prices);
	const calls = 1 + Math.max(0, input.remainingCalls);
	const saving = (index: number) => {
		const item = input.items[index] as AgeingItem;
		return item.tokens - (item.observation?.stubTokens ?? item.tokens);
	};
	if (input.cacheCold || ratios === null || input.force) {
		const removed = candidates.reduce((sum, index) => sum + saving(index), 0);
		const reason: AgeingReason = input.force ? "window-full" : input.cacheCold ? "cold-cache" : "uncached";
		return {
			age: candidates,
			reason,
			removedTokens: removed,
			rebilledTokens: 0,
			gain: removed * (ratios?.read ?? 1) * calls,
		};
	}
	// Scan candidate cut positions from the last to the first, growing the aged set and its suffix.
	const cached = Math.min(Math.max(0, input.cachedItems), input.items.length);
	const candidateSet = new Set(candidates);
	let best: AgeingPlan = NOTHING;
	let removed = 0;
	let suffix = 0;
	let position = cached;
	for (let k = candidates.length - 1; k >= 0; k--) {
		const cut = candidates[k] as number;
		// Add the cached items from the cut up to where the suffix so far starts, each as it would be sent.
		for (let index = Math.min(position, cached) - 1; index >= cut; index--) {
			const item = input.items[index] as AgeingItem;
			suffix += candidateSet.has(index) ? (item.observation?.stubTokens ?? item.tokens) : item.tokens;
		}
		position = Math.min(position, cut);
		removed += saving(cut);
		const gain = removed * ratios.read * calls - suffix * (ratios.write - ratios.read);
		if (gain > best.gain) {
			best = { age: candidates.slice(k), reason: "pays", removedTokens: removed, rebilledTokens: suffix, gain };
		}
	}
	return best;
}
