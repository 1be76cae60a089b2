import type { RunOutcome } from "./run-outcome.js";
import { isResting, type SessionStates } from "./session-state.js";

/** What the scheduler needs from the session: the loop's queue and a way to run a turn for it. */
export interface WakeHost {
	/** Messages wait in the loop's steering or follow-up queue. */
	hasQueued(): boolean;
	/** The session has a conversation to continue (before the first prompt it has not). */
	hasHistory(): boolean;
	/** Run one turn for the queued messages. */
	runQueued(): Promise<RunOutcome>;
}

/**
 * When messages from outside the user's prompt (a sub-agent's notice, an agent message) start a
 * turn: at once when the session rests (idle or held), after the current prompt, woken turn or
 * resume when one is under way, never while wakes are paused (an abort or shutdown) until the next
 * prompt. It moves the session's state between resting and `waking`.
 */
export class WakeScheduler {
	private readonly listeners = new Set<(outcome: RunOutcome) => void>();

	constructor(
		private readonly host: WakeHost,
		private readonly states: SessionStates,
	) {}

	/** A delivered message waits for a turn that the session will start (wakes are on). */
	get waiting(): boolean {
		return this.states.state.wakes === "on" && this.host.hasQueued();
	}

	onOutcome(listener: (outcome: RunOutcome) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Start turns for queued messages when the session rests. */
	kick(): void {
		if (!isResting(this.states.state) || !this.waiting) return;
		// Before the first prompt there is nothing to continue: the first prompt's run takes them.
		if (!this.host.hasHistory()) return;
		this.states.beginWaking();
		void this.runWoken().finally(() => {
			this.states.endTurn("waking");
			this.kick();
		});
	}

	private async runWoken(): Promise<void> {
		try {
			while (this.waiting) {
				const outcome = await this.host.runQueued();
				this.tell(outcome);
				if (outcome.status === "aborted") break;
			}
		} catch (error) {
			// The loop refused to continue: wait for the next prompt rather than retry at once.
			this.states.pauseWakes();
			this.tell({ status: "error", errorMessage: (error as Error).message });
		}
	}

	private tell(outcome: RunOutcome): void {
		for (const listener of this.listeners) listener(outcome);
	}
}
