/**
 * Trajectory replay with Prime Context's ageing: before each call the package's `planAgeing` decides
 * which old observations leave the prompt for their one-line stubs, priced with one provider's cache
 * ratios, exactly as the agent asks it. Aged observations stay aged; an aged message is a new
 * message to the provider's cache (a new key), so everything after it is billed as new once.
 */
import { type AgeingItem, type CachePrices, estimateRemainingCalls, planAgeing } from "prime-agent-context";
import type { PromptMessage } from "../measure/billing.js";

/** One observation of a run as the replay sees it: token counts, and what protects it. */
export interface AgeableObservation {
	/** Tokens of the view the broker gave. */
	tokens: number;
	/** Tokens of its stub; null when it cannot be aged (the broker could not archive it). */
	stubTokens: number | null;
	/** The command when the observation reported a test result (its newest result is never aged). */
	testCommand: string | null;
	/** The command that produced it, for the repeat count. */
	command: string | null;
}

export interface AgeingReplayInput {
	/** System prompt and task: the first item, never aged. */
	fixedTokens: number;
	/** Call k produces assistant message k and sees assistant messages and observations 0..k-1. */
	assistantTokens: readonly number[];
	observations: readonly AgeableObservation[];
	prices: CachePrices;
	window: number;
	/** Calls still expected after call `call` (0-based) of a run of `calls` calls. */
	remaining: (call: number, calls: number) => number;
}

export interface AgeingReplay {
	/** Each call's prompt, for `billRun`. */
	calls: PromptMessage[][];
	/** Per observation, the call from which on it is sent as its stub; null when it never was. */
	agedAt: (number | null)[];
	/** Calls at which something was aged (each breaks the cached prefix once). */
	moments: number;
}

/** What the agent passes: its estimate from the calls made before this one. */
export const estimatedRemaining = (call: number): number => estimateRemainingCalls(call);
/** The oracle: the calls that really followed in the recorded run. */
export const trueRemaining = (call: number, calls: number): number => calls - 1 - call;

export function replayWithAgeing(input: AgeingReplayInput): AgeingReplay {
	const { observations } = input;
	const calls = input.assistantTokens.length;
	const agedAt: (number | null)[] = observations.map(() => null);
	const prompts: PromptMessage[][] = [];
	let previous: PromptMessage[] = [];
	let moments = 0;
	for (let call = 0; call < calls; call++) {
		// The history as it stands (ageing so far), each item with the observation it is, if any.
		// Keys: `fixed`, `a<k>` for assistant messages, `v<i>` for an observation's view, `s<i>` once aged.
		const items: AgeingItem[] = [{ tokens: input.fixedTokens }];
		const keys = ["fixed"];
		const observationOf: (number | null)[] = [null];
		for (let i = 0; i < call; i++) {
			items.push({ tokens: input.assistantTokens[i] as number });
			keys.push(`a${i}`);
			observationOf.push(null);
			const observation = observations[i];
			if (observation === undefined) continue;
			const aged = agedAt[i] !== null;
			items.push({
				tokens: aged ? (observation.stubTokens as number) : observation.tokens,
				observation:
					observation.stubTokens === null
						? undefined
						: { stubTokens: observation.stubTokens, aged, testCommand: observation.testCommand, readBack: false },
			});
			keys.push(aged ? `s${i}` : `v${i}`);
			observationOf.push(i);
		}
		let cachedItems = 0;
		while (cachedItems < keys.length && previous[cachedItems]?.key === keys[cachedItems]) cachedItems++;
		const plan = planAgeing({
			items,
			prices: input.prices,
			cachedItems,
			remainingCalls: input.remaining(call, calls),
			cacheCold: false,
			window: input.window,
		});
		for (const index of plan.age) {
			const observation = observationOf[index];
			if (observation === null || observation === undefined) continue;
			agedAt[observation] = call;
			items[index] = { tokens: observations[observation]?.stubTokens as number };
			keys[index] = `s${observation}`;
		}
		if (plan.age.length > 0) moments++;
		const prompt = items.map((item, index) => ({ key: keys[index] as string, tokens: item.tokens }));
		prompts.push(prompt);
		previous = prompt;
	}
	return { calls: prompts, agedAt, moments };
}

/**
 * How many later commands repeat the command of an observation that was aged by then (a proxy for
 * the model needing that output back): command j is written at call j, after that call's ageing.
 */
export function repeatsOfAged(observations: readonly AgeableObservation[], agedAt: readonly (number | null)[]): number {
	let repeats = 0;
	for (let j = 0; j < observations.length; j++) {
		const command = observations[j]?.command?.trim();
		if (!command) continue;
		const repeated = observations
			.slice(0, j)
			.some((earlier, i) => (agedAt[i] ?? Number.POSITIVE_INFINITY) <= j && earlier.command?.trim() === command);
		if (repeated) repeats++;
	}
	return repeats;
}
