/**
 * When the supervisor exits on its own: with nothing to supervise for `idleExitMs` (no live
 * worker, no restart due; heartbeats and schedules live in workers) it exits and the next client
 * starts one again. Records still to be written keep it (they would be lost), and so does an open
 * connection: a client between its `hello` and its request never finds the supervisor gone. A
 * client whose connection is only queued when it exits sees it close unanswered, and starts a new one.
 */

/** How long a supervisor with nothing to supervise stays before it exits. */
export const SUPERVISOR_IDLE_EXIT_MS = 5 * 60_000;

export class IdleExit {
	private timer: NodeJS.Timeout | undefined;
	private idleSince = Date.now();
	/** Client connections open now. */
	private connections = 0;

	constructor(
		private readonly idleExitMs: number,
		/** Whether there is work that keeps the supervisor (a live worker, a restart due, a record to write). */
		private readonly busy: () => boolean,
		private readonly exit: () => void,
	) {}

	/** A client connected; `closed` resolves when it goes (the idle time counts from then). */
	connected(closed: Promise<void>): void {
		this.connections++;
		void closed.then(() => {
			this.connections--;
			this.idleSince = Date.now();
		});
	}

	arm(): void {
		const check = () => {
			if (this.connections > 0 || this.busy()) this.idleSince = Date.now();
			else if (Date.now() - this.idleSince >= this.idleExitMs) {
				this.exit();
				return;
			}
			this.timer = setTimeout(check, Math.min(this.idleExitMs, 30_000));
		};
		this.timer = setTimeout(check, Math.min(this.idleExitMs, 30_000));
	}

	close(): void {
		clearTimeout(this.timer);
	}
}
