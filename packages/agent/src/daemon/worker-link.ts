/**
 * A `SessionLink` over a daemon worker's socket: the terminal UI drives a background session
 * exactly as it drives one in its own process. Leaving detaches; the session goes on.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { LinkEvent, LinkInterrupt, LinkRunEnd, LinkStatus, SessionLink } from "../link/index.js";
import type { SessionEntry } from "../session/index.js";
import { unwrap } from "./client.js";
import type { ProtocolClient, WorkerPush, WorkerWelcome } from "./protocol.js";

type RunEnd = Extract<WorkerPush, { type: "run_end" }>;

/**
 * Connect again to the worker of `key` once the supervisor has restarted it after a crash;
 * resolves with why not when it will not come back (failed, stopped).
 */
export type Reconnect = () => Promise<{ client: ProtocolClient; welcome: WorkerWelcome } | { reason: string }>;

export class WorkerLink implements SessionLink {
	readonly agentKey: string;
	readonly notices: readonly string[];
	private current: LinkStatus;
	private readonly listeners = new Set<(event: LinkEvent) => void>();
	/** This view's prompts still running, by request id. */
	private readonly runs = new Map<number, (end: LinkRunEnd) => void>();
	private leaving = false;
	private byeReason: string | undefined;
	private client: ProtocolClient;

	constructor(
		client: ProtocolClient,
		welcome: WorkerWelcome,
		notices: readonly string[] = welcome.notices,
		private readonly reconnect?: Reconnect,
	) {
		this.agentKey = welcome.key;
		this.notices = notices;
		this.current = welcome.status;
		this.client = client;
		this.listen(client);
	}

	private listen(client: ProtocolClient): void {
		client.onPush((message) => this.onPush(message));
		void client.closed.then(() => this.onClosed(client));
	}

	status(): LinkStatus {
		return this.current;
	}

	subscribe(listener: (event: LinkEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	prompt(text: string): Promise<LinkRunEnd> {
		if (this.byeReason !== undefined) return Promise.resolve(this.gone());
		const id = this.client.send({ type: "prompt", text });
		return new Promise((resolve) => this.runs.set(id, resolve));
	}

	async steer(text: string): Promise<void> {
		unwrap(await this.client.request({ type: "steer", text }));
	}

	async followUp(text: string): Promise<void> {
		unwrap(await this.client.request({ type: "follow_up", text }));
	}

	async interrupt(): Promise<LinkInterrupt> {
		return unwrap<{ action: LinkInterrupt }>(await this.client.request({ type: "interrupt" })).action;
	}

	async history(): Promise<AgentMessage[]> {
		return unwrap<AgentMessage[]>(await this.client.request({ type: "history" }));
	}

	async tree(): Promise<{ entries: SessionEntry[]; leafId: string | null }> {
		return unwrap(await this.client.request({ type: "tree" }));
	}

	async branch(leafId: string | null): Promise<void> {
		unwrap(await this.client.request({ type: "branch", leafId }));
	}

	async readArchive(id: string, start: number, end: number): Promise<string> {
		return unwrap<string>(await this.client.request({ type: "read_archive", archiveId: id, start, end }));
	}

	answerStillBusy(choice: "wait" | "restart"): void {
		this.client.send({ type: "still_busy_answer", choice });
	}

	/** Detach: the session, its running turn and its queue go on in the worker. */
	async close(): Promise<string> {
		if (this.leaving) return "";
		this.leaving = true;
		if (this.byeReason !== undefined) return "";
		await this.client.request({ type: "detach" });
		this.client.close();
		return `Detached from agent ${this.agentKey}; it keeps running. \`prime-agent attach ${this.agentKey}\` comes back, \`prime-agent shutdown ${this.agentKey}\` stops it.`;
	}

	/** Stop the worker (its session and kernel variables are saved); resolves once it is gone. */
	async shutdown(): Promise<void> {
		this.leaving = true;
		if (this.byeReason === undefined) await this.client.request({ type: "shutdown" });
		this.client.close();
		await this.client.closed;
	}

	private onPush(message: Record<string, unknown>): void {
		switch (message.type) {
			case "event":
				this.emit(message.event as LinkEvent);
				return;
			case "status":
				this.current = message.status as LinkStatus;
				this.emit({ type: "status" });
				return;
			case "still_busy":
				this.emit({ type: "still_busy" });
				return;
			case "run_end": {
				const end = message as unknown as RunEnd;
				if (end.state) this.current = end.state;
				const own = this.runs.get(end.id);
				this.runs.delete(end.id);
				if (own) own(end.link);
				else this.emit({ type: "run_end", ...end.link });
				return;
			}
			case "bye":
				this.byeReason = String(message.reason);
				return;
		}
	}

	private onClosed(client: ProtocolClient): void {
		if (client !== this.client) return;
		// Gone without a word (it crashed): the supervisor restarts it; this view follows it there.
		if (this.byeReason === undefined && !this.leaving && this.reconnect) {
			void this.follow(this.reconnect);
			return;
		}
		this.byeReason ??= "the worker went away";
		this.endRuns(this.gone());
		if (!this.leaving) this.emit({ type: "bye", reason: this.byeReason });
	}

	/** Emit `reconnecting`, then `reconnected` once the restarted worker answers (or `bye` when it will not). */
	private async follow(reconnect: Reconnect): Promise<void> {
		this.endRuns({
			status: "error",
			errorMessage: `The agent's worker stopped during this run; the supervisor restarts it from the session's last saved entry.`,
		});
		this.current = { ...this.current, running: false };
		this.emit({ type: "reconnecting" });
		const again = await reconnect().catch((error: Error) => ({ reason: error.message }));
		if (this.leaving) {
			if ("client" in again) again.client.close();
			return;
		}
		if ("reason" in again) {
			this.byeReason = again.reason;
			this.emit({ type: "bye", reason: again.reason });
			return;
		}
		this.client = again.client;
		this.current = again.welcome.status;
		this.listen(again.client);
		this.emit({ type: "reconnected" });
	}

	private endRuns(end: LinkRunEnd): void {
		for (const resolve of this.runs.values()) resolve(end);
		this.runs.clear();
	}

	private gone(): LinkRunEnd {
		return {
			status: "error",
			errorMessage: `The agent's worker stopped (${this.byeReason}). \`prime-agent agents\` shows its state; \`prime-agent attach ${this.agentKey}\` continues the session.`,
		};
	}

	private emit(event: LinkEvent): void {
		for (const listener of this.listeners) listener(event);
	}
}
