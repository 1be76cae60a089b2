import { Emitter } from "../emitter.js";
import type { RunOutcome } from "./run-outcome.js";

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
 * turn: at once when the session is idle, after the current turn when one runs, never after
 * `pause()` (an abort or shutdown) until the next prompt.
 */
export class WakeScheduler {
	/** A prompt or a woken turn is under way (wider than the loop's run: preamble and late compaction too). */
	private turnActive = false;
	private wakeRun: Promise<void> | undefined;
	private paused = false;
	private readonly listeners = new Set<(outcome: RunOutcome) => void>();
	private readonly idle = new Emitter();

	constructor(private readonly host: WakeHost) {}

	/** A user prompt starts: wakes resume, and none starts while it runs. */
	beginPrompt(): void {
		this.paused = false;
		this.turnActive = true;
	}

	/** The prompt ended: messages that arrived meanwhile start their turn now. */
	endPrompt(): void {
		this.turnActive = false;
		this.kick();
		this.announceIdle();
	}

	/** Messages wait for the next prompt instead of starting a turn. */
	pause(): void {
		this.paused = true;
		this.announceIdle();
	}

	get waking(): boolean {
		return this.wakeRun !== undefined;
	}

	get busy(): boolean {
		return this.turnActive || this.wakeRun !== undefined || (!this.paused && this.host.hasQueued());
	}

	async whenIdle(): Promise<void> {
		while (this.wakeRun) await this.wakeRun;
	}

	onOutcome(listener: (outcome: RunOutcome) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/**
	 * Listen to each moment `busy` turns false: a prompt or woken turn ended (or `pause()` left the
	 * queued messages for the next prompt) and nothing else is under way or about to start.
	 */
	onIdle(listener: () => void): () => void {
		return this.idle.on(listener);
	}

	private announceIdle(): void {
		if (!this.busy) this.idle.emit();
	}

	/** Start a turn for queued messages when nothing runs. */
	kick(): void {
		if (this.paused || this.turnActive || this.wakeRun || !this.host.hasQueued()) return;
		// Before the first prompt there is nothing to continue: the first prompt's run takes them.
		if (!this.host.hasHistory()) return;
		this.wakeRun = this.runWoken().finally(() => {
			this.wakeRun = undefined;
			this.kick();
			this.announceIdle();
		});
	}

	private async runWoken(): Promise<void> {
		this.turnActive = true;
		try {
			while (!this.paused && this.host.hasQueued()) {
				const outcome = await this.host.runQueued();
				for (const listener of this.listeners) listener(outcome);
				if (outcome.status === "aborted") break;
			}
		} catch (error) {
			// The loop refused to continue: wait for the next prompt rather than retry at once.
			this.paused = true;
			const outcome: RunOutcome = { status: "error", errorMessage: (error as Error).message };
			for (const listener of this.listeners) listener(outcome);
		} finally {
			this.turnActive = false;
		}
	}
}
