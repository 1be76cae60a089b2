import type { StreamFn } from "@mariozechner/pi-agent-core";
import { streamSimple } from "@mariozechner/pi-ai";
import { markSecondToLastMessage } from "./cache-breakpoints.js";

/**
 * A signal for one provider call that follows `parent` (the run's signal) until `release()`.
 * Provider clients add an abort listener to the signal they get and never remove it; given the
 * run's own signal, ten calls in one run already pass Node's listener limit (and each listener
 * holds its request). Each call gets its own signal instead, and its one listener on the run's
 * signal is removed when the call ends.
 */
export function callSignal(parent: AbortSignal | undefined): { signal: AbortSignal | undefined; release(): void } {
	if (!parent) return { signal: undefined, release: () => {} };
	const controller = new AbortController();
	const forward = () => controller.abort(parent.reason);
	if (parent.aborted) controller.abort(parent.reason);
	else parent.addEventListener("abort", forward, { once: true });
	return { signal: controller.signal, release: () => parent.removeEventListener("abort", forward) };
}

/**
 * The loop's stream function: pi-ai's `streamSimple`, each call on its own signal (see `callSignal`);
 * an Anthropic request also marks its second-to-last message for the cache (see `cache-breakpoints`).
 */
export const streamWithCallSignal: StreamFn = (model, context, options) => {
	const { signal, release } = callSignal(options?.signal);
	const onPayload = options?.onPayload;
	const stream = streamSimple(model, context, {
		...options,
		signal,
		onPayload: async (payload, payloadModel) => {
			const next = (await onPayload?.(payload, payloadModel)) ?? payload;
			if (payloadModel.api === "anthropic-messages") markSecondToLastMessage(next);
			return next;
		},
	});
	stream.result().then(release, release);
	return stream;
};
