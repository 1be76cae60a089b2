/**
 * A `SessionLink` over a daemon worker's socket: the terminal UI drives a background session
 * exactly as it drives one in its own process. Leaving detaches; the session goes on.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { ExitCode, UserError } from "../errors.js";
import type { LinkInterrupt, LinkRunEnd, LinkStatus, SessionEvent, SessionLink } from "../link/index.js";
import type { SessionEntry } from "../session/index.js";
import { unwrap } from "./client.js";
import type { ProtocolClient, WorkerPush, WorkerWelcome } from "./protocol.js";

type RunEnd = Extract<WorkerPush, { type: "run_end" }>;

const AGAIN = "Try again once the view says it has reconnected.";
/** How long leaving waits for the worker's answer (it may be stopped: SIGSTOP). */
const LEAVE_WAIT_MS = 5000;

/**
 * Connect again to the worker of `key` once the supervisor has restarted it after a crash;
 * resolves with why not when it will not come back (failed, stopped).
 */
export type Reconnect = (
	/** The worker is being started again on purpose: while it is down it reads as saved. */
	restarting: boolean,
) => Promise<{ client: ProtocolClient; welcome: WorkerWelcome } | { reason: string }>;

export class WorkerLink implements SessionLink {
	readonly agentKey: string;
	readonly notices: readonly string[];
	private current: LinkStatus;
	private readonly listeners = new Set<(event: SessionEvent) => void>();
	/** This view's prompts still running, by request id. */
	private readonly runs = new Map<number, (end: LinkRunEnd) => void>();
	private leaving = false;
	private byeReason: string | undefined;
	/** The worker's `bye` said it is started again at once (another view's `/model`). */
	private restarting = false;
	/** Why the worker being waited for went (a restart on purpose), if not a crash. */
	private restartReason: string | undefined;
	/** The worker died and the supervisor's restart is awaited. */
	private reconnecting = false;
	private client: ProtocolClient;
	/** Events that came before anyone subscribed (between the welcome and the view's start). */
	private early: SessionEvent[] | undefined = [];

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

	subscribe(listener: (event: SessionEvent) => void): () => void {
		this.listeners.add(listener);
		const early = this.early;
		this.early = undefined;
		for (const event of early ?? []) listener(event);
		return () => this.listeners.delete(listener);
	}

	prompt(text: string): Promise<LinkRunEnd> {
		if (this.byeReason !== undefined) return Promise.resolve(this.gone());
		if (this.reconnecting || !this.client.isOpen)
			return Promise.resolve({
				status: "error",
				exitCode: ExitCode.modelError,
				errorMessage: `${this.restartingText()} ${AGAIN}`,
				notSent: true,
			});
		const id = this.client.send({ type: "prompt", text });
		return new Promise((resolve) => this.runs.set(id, resolve));
	}

	async steer(text: string): Promise<void> {
		await this.ask({ type: "steer", text });
	}

	async followUp(text: string): Promise<void> {
		await this.ask({ type: "follow_up", text });
	}

	async queue(text: string): Promise<void> {
		await this.ask({ type: "queue", text });
	}

	async interrupt(stop = false): Promise<LinkInterrupt> {
		return (await this.ask<{ action: LinkInterrupt }>({ type: "interrupt", ...(stop ? { stop } : {}) })).action;
	}

	history(): Promise<AgentMessage[]> {
		return this.ask({ type: "history" });
	}

	tree(): Promise<{ entries: SessionEntry[]; leafId: string | null }> {
		return this.ask({ type: "tree" });
	}

	async branch(leafId: string | null): Promise<void> {
		await this.ask({ type: "branch", leafId });
	}

	readArchive(id: string, start: number, end: number): Promise<string> {
		return this.ask({ type: "read_archive", archiveId: id, start, end });
	}

	checkModel(ref: string): Promise<string> {
		return this.ask({ type: "check_model", ref });
	}

	answerStillBusy(choice: "wait" | "restart", question?: number): void {
		this.client.send({ type: "still_busy_answer", choice, ...(question === undefined ? {} : { question }) });
	}

	/** Detach: the session, its running turn and its queue go on in the worker. */
	async close(): Promise<string> {
		if (this.leaving) return "";
		this.leaving = true;
		if (this.byeReason !== undefined) return "";
		// Waiting for a restart: nothing to detach from (the restarted worker will have no client).
		// A worker that does not answer (stopped with SIGSTOP) does not hold the view: it leaves anyway.
		if (this.client.isOpen && !this.reconnecting) await this.client.request({ type: "detach" }, LEAVE_WAIT_MS);
		this.client.close();
		return `Detached from agent ${this.agentKey}; it keeps running. \`prime-agent attach ${this.agentKey}\` comes back, \`prime-agent shutdown ${this.agentKey}\` stops it.`;
	}

	/**
	 * Leave for another session: the worker stops when this was its only view and it has nothing
	 * to do (no run, heartbeat or schedule), else it goes on. Resolves once it has answered (and, when
	 * it stops, once it is gone).
	 */
	async release(): Promise<void> {
		this.leaving = true;
		if (this.byeReason === undefined && this.client.isOpen && !this.reconnecting) {
			const reply = await this.client.request({ type: "release" }, LEAVE_WAIT_MS);
			if (reply.ok && (reply.data as { stopping?: boolean } | undefined)?.stopping) await this.client.closed;
		}
		this.client.close();
	}

	/** Stop listening without a word to the worker (the supervisor is about to start it again). */
	abandon(): void {
		this.leaving = true;
		this.client.close();
	}

	private restartingText(): string {
		return this.restartReason
			? `The agent's worker is being started again (${this.restartReason}).`
			: "The agent's worker is restarting after it stopped unexpectedly.";
	}

	/** A request to the worker; a `UserError` when it fails or the worker is away. */
	private async ask<T>(message: Record<string, unknown> & { type: string }): Promise<T> {
		if (this.byeReason !== undefined)
			throw new UserError(
				`The agent's worker stopped (${this.byeReason}).`,
				`\`prime-agent attach ${this.agentKey}\` continues the session.`,
			);
		if (this.reconnecting) throw new UserError(this.restartingText(), AGAIN);
		const reply = await this.client.request(message);
		if (!reply.ok && reply.closed) throw new UserError("The agent's worker went away before it answered.", AGAIN);
		return unwrap<T>(reply);
	}

	private onPush(message: Record<string, unknown>): void {
		switch (message.type) {
			case "event":
				this.emit(message.event as SessionEvent);
				return;
			case "status":
				this.current = message.status as LinkStatus;
				this.emit({ type: "status" });
				return;
			case "still_busy":
				this.emit({ type: "still_busy", question: message.question as number });
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
				this.restarting = message.restart === true;
				return;
		}
	}

	private onClosed(client: ProtocolClient): void {
		if (client !== this.client) return;
		// Gone without a word (it crashed: the supervisor restarts it), or started again on another
		// model by another view: this view follows it there.
		if ((this.byeReason === undefined || this.restarting) && !this.leaving && this.reconnect) {
			const restarting = this.restarting;
			const reason = this.byeReason;
			this.byeReason = undefined;
			this.restarting = false;
			void this.follow(this.reconnect, restarting ? reason : undefined);
			return;
		}
		this.byeReason ??= "the worker went away";
		this.endRuns(this.gone());
		if (!this.leaving) this.emit({ type: "bye", reason: this.byeReason });
	}

	/**
	 * Emit `reconnecting`, then `reconnected` once the restarted worker answers (or `bye` when it
	 * will not). `restartReason`: the worker said it is being started again (not a crash).
	 */
	private async follow(reconnect: Reconnect, restartReason?: string): Promise<void> {
		this.reconnecting = true;
		this.restartReason = restartReason;
		this.endRuns({
			status: "error",
			exitCode: ExitCode.modelError,
			errorMessage: restartReason
				? `The agent's worker stopped during this run: ${restartReason}.`
				: `The agent's worker stopped during this run; the supervisor restarts it from the session's last saved entry.`,
		});
		this.current = { ...this.current, running: false };
		this.emit({ type: "reconnecting", ...(restartReason ? { reason: restartReason } : {}) });
		const again = await reconnect(restartReason !== undefined).catch((error: Error) => ({ reason: error.message }));
		this.reconnecting = false;
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
		this.emit({ type: "reconnected", ...(restartReason ? { reason: restartReason } : {}) });
	}

	private endRuns(end: LinkRunEnd): void {
		for (const resolve of this.runs.values()) resolve(end);
		this.runs.clear();
	}

	private gone(): LinkRunEnd {
		return {
			status: "error",
			exitCode: ExitCode.modelError,
			errorMessage: `The agent's worker stopped (${this.byeReason}). \`prime-agent agents\` shows its state; \`prime-agent attach ${this.agentKey}\` continues the session.`,
		};
	}

	private emit(event: SessionEvent): void {
		if (this.early) this.early.push(event);
		for (const listener of this.listeners) listener(event);
	}
}
