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

export class WorkerLink implements SessionLink {
	readonly agentKey: string;
	readonly notices: readonly string[];
	private current: LinkStatus;
	private readonly listeners = new Set<(event: LinkEvent) => void>();
	/** This view's prompts still running, by request id. */
	private readonly runs = new Map<number, (end: LinkRunEnd) => void>();
	private leaving = false;
	private byeReason: string | undefined;

	constructor(
		private readonly client: ProtocolClient,
		welcome: WorkerWelcome,
		notices: readonly string[] = welcome.notices,
	) {
		this.agentKey = welcome.key;
		this.notices = notices;
		this.current = welcome.status;
		client.onPush((message) => this.onPush(message));
		void client.closed.then(() => this.onClosed());
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

	private onClosed(): void {
		this.byeReason ??= "the worker went away";
		for (const resolve of this.runs.values()) resolve(this.gone());
		this.runs.clear();
		if (!this.leaving) this.emit({ type: "bye", reason: this.byeReason });
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
