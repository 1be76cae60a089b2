import type { CompactResult } from "../compaction/index.js";
import type { CompactionReason } from "../extensions/index.js";

interface CompactionRequest {
	reason: CompactionReason;
	customInstructions?: string;
}

/**
 * When compactions run. Contract:
 * - `request` during a run marks one compaction for the next turn boundary (`takeRequest` hands it
 *   to the loop before the next provider call, or after the run when no call followed).
 * - `request` while idle queues the compaction like a command: it starts at once, and `settled()`
 *   resolves only after it (and every compaction queued before it) ended. A prompt, a command and
 *   the end of a session await `settled()`, so an idle request is never lost or raced.
 * - Only one request waits for a boundary: a later one replaces it (its instructions win).
 */
export class CompactionScheduler {
	private pending: CompactionRequest | undefined;
	private queue: Promise<void> = Promise.resolve();

	constructor(
		private readonly compact: (
			reason: CompactionReason,
			customInstructions?: string,
		) => Promise<CompactResult | undefined>,
		private readonly isRunning: () => boolean,
	) {}

	request(reason: CompactionReason, customInstructions?: string): void {
		if (this.isRunning()) {
			this.pending = { reason, customInstructions };
			return;
		}
		// `compact` reports its own failures (as notices) and never rejects; the catch keeps the queue alive regardless.
		this.queue = this.queue
			.then(() => this.compact(reason, customInstructions))
			.then(
				() => undefined,
				() => undefined,
			);
	}

	/** The compaction asked for during the run, if any; taking it clears it. */
	takeRequest(): CompactionRequest | undefined {
		const request = this.pending;
		this.pending = undefined;
		return request;
	}

	/** Resolves once every idle compaction queued so far has ended. */
	settled(): Promise<void> {
		return this.queue;
	}
}
