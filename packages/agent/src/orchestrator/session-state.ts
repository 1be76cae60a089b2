import type { DiskWriteError } from "../home/index.js";

/**
 * Whether a message delivered from outside the user's prompt (a sub-agent's notice, an agent
 * message) starts a turn of its own: `paused` after an abort, a shutdown or a woken turn the loop
 * refused, until the next prompt. It outlives the phases, so every phase carries it.
 */
export type Wakes = "on" | "paused";

/** What one run of the agent loop met besides its messages (read for its outcome). */
export interface LoopRun {
	/** A compaction happened during the run: the loop's own message list is stale. */
	compacted: boolean;
	/** Why the kernel could not start (the run then stops). */
	kernelFailure?: string;
	/** The disk refused to record a message: the run stopped there. */
	writeFailure?: DiskWriteError;
}

/**
 * What a session is doing; exactly one at a time.
 * - `idle`: nothing runs.
 * - `held`: idle, and the run supervisor holds its continuation until sub-agents settle
 *   (`AgentSession.resumeHeld` asks it again).
 * - `resuming`: the supervisor is being asked again (its gates may run). It is work like a turn:
 *   a prompt and a delivered message's turn wait for its verdict; an abort stops it.
 * - `prompting`: a user prompt, from its preamble to its late compaction.
 * - `waking`: turns for delivered messages, one after another until none waits.
 * A turn's `hold` says the supervisor held at the run's last stop: the turn then ends `held`.
 * `loop` is the agent loop's current run inside the turn (none in the preamble or a late compaction).
 */
export type SessionState =
	| { phase: "idle"; wakes: Wakes }
	| { phase: "held"; wakes: Wakes }
	| { phase: "resuming"; wakes: Wakes; abort: AbortController }
	| { phase: "prompting"; wakes: Wakes; hold: boolean; loop?: LoopRun }
	| { phase: "waking"; wakes: Wakes; hold: boolean; loop?: LoopRun };

export type SessionPhase = SessionState["phase"];

type Turn = Extract<SessionState, { phase: "prompting" | "waking" }>;

/** Nothing of the session's own runs: idle, or idle with a held continuation. */
export function isResting(state: SessionState): state is Extract<SessionState, { phase: "idle" | "held" }> {
	return state.phase === "idle" || state.phase === "held";
}

/**
 * The session's state and its moves. Contract: every change replaces the whole state (listeners
 * hear each one, in order); a move that does not fit the current phase is refused with an error
 * naming both, so a broken sequence shows at once instead of leaving a flag behind.
 */
export class SessionStates {
	private current: SessionState = { phase: "idle", wakes: "on" };
	private readonly listeners = new Set<(state: SessionState) => void>();

	get state(): SessionState {
		return this.current;
	}

	/** The agent loop's current run, inside a prompt or a woken turn. */
	get loop(): LoopRun | undefined {
		const state = this.current;
		return state.phase === "prompting" || state.phase === "waking" ? state.loop : undefined;
	}

	/** Hear every change (after it happened). */
	onChange(listener: (state: SessionState) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Resolves once nothing of the session's own runs (a prompt, a woken turn, a resume) is under way. */
	async whenResting(): Promise<void> {
		while (!isResting(this.current)) {
			await new Promise<void>((resolve) => {
				const stop = this.onChange(() => {
					stop();
					resolve();
				});
			});
		}
	}

	/** A user prompt starts (the caller waited until resting): wakes resume, a held continuation is dropped (the prompt's run asks again). */
	beginPrompt(): void {
		this.expect("begin a prompt", "idle", "held");
		this.set({ phase: "prompting", wakes: "on", hold: false });
	}

	/** Turns start for delivered messages; a held continuation stays held unless a turn's stop decides anew. */
	beginWaking(): void {
		const state = this.expect("wake", "idle", "held");
		this.set({ phase: "waking", wakes: state.wakes, hold: state.phase === "held" });
	}

	/** The prompt or the woken turns ended: `held` when the supervisor held at the last stop. */
	endTurn(phase: Turn["phase"]): void {
		const state = this.expect(`end ${phase}`, phase) as Turn;
		this.set({ phase: state.hold ? "held" : "idle", wakes: state.wakes });
	}

	/** A run of the agent loop starts inside the current turn. */
	beginLoop(): void {
		const state = this.expect("start the agent loop", "prompting", "waking") as Turn;
		this.set({ ...state, loop: { compacted: false } });
	}

	/** Record what the loop's current run met (a compaction, a kernel or disk failure); outside a run there is none to note. */
	noteLoop(fact: Partial<LoopRun>): void {
		const state = this.current;
		if ((state.phase === "prompting" || state.phase === "waking") && state.loop)
			this.set({ ...state, loop: { ...state.loop, ...fact } });
	}

	/** That run of the loop ended (the turn goes on, or ends): what it met. */
	endLoop(): LoopRun {
		const { loop, ...state } = this.expect("end the agent loop", "prompting", "waking") as Turn;
		this.set(state);
		return loop ?? { compacted: false };
	}

	/** The supervisor's verdict at a stop inside a turn: hold the continuation, or not. */
	setHold(hold: boolean): void {
		const state = this.expect("record the supervisor's verdict", "prompting", "waking") as Turn;
		if (state.hold !== hold) this.set({ ...state, hold });
	}

	/** The supervisor is asked again about a held continuation; its signal aborts with `pause()`. */
	beginResume(): AbortSignal {
		const state = this.expect("resume a held continuation", "held");
		const abort = new AbortController();
		this.set({ phase: "resuming", wakes: state.wakes, abort });
		return abort.signal;
	}

	/** The supervisor answered: `held` again, or idle. Nothing moves when the resume was aborted meanwhile. */
	endResume(signal: AbortSignal, hold: boolean): void {
		const state = this.current;
		if (state.phase !== "resuming" || state.abort.signal !== signal) return;
		this.set({ phase: hold ? "held" : "idle", wakes: state.wakes });
	}

	/**
	 * An abort or a shutdown: delivered messages wait for the next prompt, a held continuation is
	 * dropped, a resume is aborted. A running turn goes on until its loop stops (the caller aborts it).
	 */
	pause(): void {
		const state = this.current;
		if (state.phase === "resuming") state.abort.abort();
		if (state.phase === "prompting" || state.phase === "waking") this.set({ ...state, wakes: "paused", hold: false });
		else this.set({ phase: "idle", wakes: "paused" });
	}

	/** The loop refused a woken turn: wait for the next prompt rather than retry at once. */
	pauseWakes(): void {
		const state = this.current;
		if (state.wakes !== "paused") this.set({ ...state, wakes: "paused" });
	}

	private expect<P extends SessionPhase>(move: string, ...phases: P[]): Extract<SessionState, { phase: P }> {
		const state = this.current;
		if (!(phases as SessionPhase[]).includes(state.phase))
			throw new Error(`The session cannot ${move} while ${state.phase} (only while ${phases.join(" or ")}).`);
		return state as Extract<SessionState, { phase: P }>;
	}

	private set(state: SessionState): void {
		this.current = state;
		for (const listener of [...this.listeners]) listener(state);
	}
}
