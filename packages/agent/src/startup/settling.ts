/** What decides whether a session has settled, and the events after which that may have changed. */
export interface SettleState {
	/** A turn runs or waits to start, or a sub-agent at any depth starts, works or has a message to take. */
	busy(): boolean;
	/** A continuation waits for sub-agents to settle (see `AgentSession.continuationHeld`). */
	held(): boolean;
	/** Ask again about the held continuation: it may start a turn (busy again) or end the wait. */
	resumeHeld(): Promise<void>;
	/**
	 * Listen to every event after which `busy()` may have turned false: a turn of this session or of
	 * a sub-agent ended, a sub-agent finished, went idle or came back. An event may come before the
	 * microtasks that finish its change have run (a sub-agent's end is announced before its work
	 * settles); one that comes later still is a contract broken.
	 */
	onChange(listener: () => void): () => void;
}

/**
 * Resolve once the session is idle, every sub-agent has settled and a held continuation has been
 * asked about again, or at once when `signal` aborts. `busy()` is asked again only after a change
 * (no clock), once the microtasks that change set off have run.
 */
export async function whenSettled(state: SettleState, signal?: AbortSignal): Promise<void> {
	while (!signal?.aborted) {
		if (state.busy()) await nextChange(state, signal);
		else if (state.held()) await state.resumeHeld();
		else return;
	}
}

function nextChange(state: SettleState, signal: AbortSignal | undefined): Promise<void> {
	return new Promise((resolve) => {
		const stop = state.onChange(() => {
			finish();
			// Checked after the promise callbacks already queued (the rest of the change) have run.
			setImmediate(resolve);
		});
		const finish = () => {
			stop();
			signal?.removeEventListener("abort", aborted);
		};
		const aborted = () => {
			finish();
			resolve();
		};
		signal?.addEventListener("abort", aborted, { once: true });
	});
}
