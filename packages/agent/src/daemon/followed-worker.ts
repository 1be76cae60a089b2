/**
 * A line view's connection to an agent's worker (the line chat, `attach --mode json`) that follows
 * the worker through restarts, as `WorkerLink` does for the terminal UI: when the connection closes
 * without a `bye` (the worker crashed), or with one saying the worker is started again, the view
 * waits for the supervisor's restart and connects to the new worker.
 */
import type { Reply, RequestOf, WorkerPush } from "./protocol.js";
import type { WorkerClient, WorkerRequests } from "./requests.js";
import type { Reconnect } from "./worker-link.js";

export interface FollowHandlers {
	/** A push of the worker now connected (`event`, `run_end`, `status`, `bye`, ...). */
	push(message: WorkerPush): void;
	/** The worker went and its restart is awaited; `reason`: it is started again on purpose (not a crash). */
	reconnecting(reason?: string): void;
	/** Connected to the restarted worker. */
	reconnected(reason?: string): void;
	/** The worker is gone and will not come back (stopped, failed, not restarted in time), or the view left. */
	gone(reason: string): void;
}

export class FollowedWorker {
	private current: WorkerClient;
	private leaving = false;
	private byeReason: string | undefined;
	/** The worker's `bye` said it is started again at once (another view's `/model`). */
	private restarting = false;
	private away = false;

	constructor(
		first: WorkerClient,
		private readonly reconnect: Reconnect | undefined,
		private readonly on: FollowHandlers,
	) {
		this.current = first;
		this.listen(first);
	}

	/** The worker's restart is awaited: nothing can be sent now. */
	get reconnecting(): boolean {
		return this.away;
	}

	send<K extends keyof WorkerRequests & string>(message: RequestOf<WorkerRequests, K>): number {
		return this.current.send(message);
	}

	request<K extends keyof WorkerRequests & string>(
		message: RequestOf<WorkerRequests, K>,
		timeoutMs?: number,
	): Promise<Reply<WorkerRequests[K]["reply"]>> {
		return this.current.request(message, timeoutMs);
	}

	/** The view leaves: `detach` (unless the worker is away), then the connection closes. Followed no more. */
	async leave(): Promise<void> {
		if (this.leaving) return;
		this.leaving = true;
		if (!this.away && this.current.isOpen) await this.current.request({ type: "detach" }, 5000);
		this.current.close();
	}

	private listen(client: WorkerClient): void {
		client.onPush((message) => {
			if (message.type === "bye") {
				this.byeReason = message.reason;
				this.restarting = message.restart === true;
			}
			this.on.push(message);
		});
		void client.closed.then(() => this.onClosed(client));
	}

	private async onClosed(client: WorkerClient): Promise<void> {
		if (client !== this.current || this.leaving) return;
		if (!this.reconnect || (this.byeReason !== undefined && !this.restarting)) {
			this.on.gone(this.byeReason ?? "the worker went away");
			return;
		}
		const reason = this.restarting ? this.byeReason : undefined;
		this.byeReason = undefined;
		this.restarting = false;
		this.away = true;
		this.on.reconnecting(reason);
		const again = await this.reconnect(reason !== undefined).catch((error: Error) => ({ reason: error.message }));
		this.away = false;
		if (this.leaving) {
			if ("client" in again) again.client.close();
			return;
		}
		if ("reason" in again) {
			this.on.gone(again.reason);
			return;
		}
		this.current = again.client;
		this.listen(again.client);
		this.on.reconnected(reason);
	}
}
