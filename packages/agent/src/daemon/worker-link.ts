/**
 * A `SessionLink` over a daemon worker's socket: the terminal UI drives a background session
 * exactly as it drives one in its own process. Leaving detaches; the session goes on.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { ExitCode, UserError } from "../errors.js";
import type { LinkInterrupt, LinkRunEnd, LinkStatus, PromptOptions, SessionEvent, SessionLink } from "../link/index.js";
import type { SessionEntry } from "../session/index.js";
import { unwrap } from "./client.js";
import type { RequestOf, WorkerPush, WorkerWelcome } from "./protocol.js";
import type { WorkerClient, WorkerRequests } from "./requests.js";

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
) => Promise<{ client: WorkerClient; welcome: WorkerWelcome } | { reason: string }>;

/** The worker's `bye`: why it stops; `restart`: it is started again at once (another view's `/model`). */
interface Bye {
	reason: string;
	restart: boolean;
}

/**
 * Where this view stands with its worker:
 * - `open`: requests go to `client`; `bye` once the worker has said it stops (its connection closes next);
 * - `reconnecting`: the worker went (a crash, or `reason`: started again on purpose) and the
 *   supervisor's restart is awaited;
 * - `stopped`: the worker stopped for `reason` and will not come back to this view;
 * - `left`: this view left (detach, release, abandon); `client`, the connection it is closing
 *   (none when it left while reconnecting); `reason`, why the worker stopped, if it did.
 */
export type WorkerLinkState =
	| { kind: "open"; client: WorkerClient; bye?: Bye }
	| { kind: "reconnecting"; reason?: string }
	| { kind: "stopped"; reason: string }
	| { kind: "left"; client?: WorkerClient; reason?: string };

export interface WorkerLinkOptions {
	/** What the view says when it starts (the worker's welcome notices when not given). */
	notices?: readonly string[];
	/** Follow the worker when it restarts (without: its going ends the view with `bye`). */
	reconnect?: Reconnect;
	/**
	 * Hear only this view's runs: events of a run another view asked for are left out (a one-shot
	 * `-p` sent to a session open in another view prints its own run only).
	 */
	ownRunsOnly?: boolean;
}

export class WorkerLink implements SessionLink {
	readonly agentKey: string;
	readonly notices: readonly string[];
	readonly resumed: boolean;
	private readonly reconnect: Reconnect | undefined;
	private readonly ownRunsOnly: boolean;
	private current: LinkStatus;
	private readonly listeners = new Set<(event: SessionEvent) => void>();
	/** This view's prompts still running, by request id. */
	private readonly runs = new Map<number, (end: LinkRunEnd) => void>();
	private state: WorkerLinkState;
	/** Events that came before anyone subscribed (between the welcome and the view's start). */
	private early: SessionEvent[] | undefined = [];

	constructor(client: WorkerClient, welcome: WorkerWelcome, options: WorkerLinkOptions = {}) {
		this.agentKey = welcome.key;
		this.notices = options.notices ?? welcome.notices;
		this.resumed = welcome.resumed;
		this.reconnect = options.reconnect;
		this.ownRunsOnly = options.ownRunsOnly === true;
		this.current = welcome.status;
		this.state = { kind: "open", client };
		this.listen(client);
	}

	/** Where this view stands with its worker (see `WorkerLinkState`). */
	get connection(): WorkerLinkState["kind"] {
		return this.state.kind;
	}

	private listen(client: WorkerClient): void {
		client.onPush((message) => this.onPush(message));
		void client.closed.then(() => this.onClosed(client));
	}

	/** This view has left (a check the compiler does not narrow away across an `await`). */
	private get hasLeft(): boolean {
		return this.state.kind === "left";
	}

	/** The connection requests go to, if any. */
	private get client(): WorkerClient | undefined {
		return this.state.kind === "open" || this.state.kind === "left" ? this.state.client : undefined;
	}

	/** Why the worker stopped, once it has said or shown so. */
	private get stopReason(): string | undefined {
		const state = this.state;
		if (state.kind === "open") return state.bye?.reason;
		return state.kind === "stopped" || state.kind === "left" ? state.reason : undefined;
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

	prompt(text: string, options: PromptOptions = {}): Promise<LinkRunEnd> {
		const reason = this.stopReason;
		if (reason !== undefined) return Promise.resolve(this.gone(reason));
		const client = this.client;
		if (!client?.isOpen) return Promise.resolve({ ...failed(`${this.restartingText()} ${AGAIN}`), notSent: true });
		const id = client.send({ type: "prompt", text, ...(options.settle ? { settle: true } : {}) });
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
		return (await this.ask({ type: "interrupt", ...(stop ? { stop } : {}) })).action;
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
		this.client?.send({ type: "still_busy_answer", choice, ...(question === undefined ? {} : { question }) });
	}

	/** Detach: the session, its running turn and its queue go on in the worker. */
	async close(): Promise<string> {
		const state = this.state;
		if (state.kind === "left") return "";
		const reason = this.stopReason;
		const client = state.kind === "open" ? state.client : undefined;
		this.state = { kind: "left", client, reason };
		if (reason !== undefined) return "";
		// Waiting for a restart: nothing to detach from (the restarted worker will have no client).
		// A worker that does not answer (stopped with SIGSTOP) does not hold the view: it leaves anyway.
		if (client?.isOpen) await client.request({ type: "detach" }, LEAVE_WAIT_MS);
		client?.close();
		return `Detached from agent ${this.agentKey}; it keeps running. \`prime-agent attach ${this.agentKey}\` comes back, \`prime-agent shutdown ${this.agentKey}\` stops it.`;
	}

	/**
	 * End a one-shot run's worker (its run has ended): resolves once the worker has stopped and the
	 * session is saved. A worker that also serves other views only lets this one go.
	 */
	async shutdown(): Promise<void> {
		const client = this.leave();
		if (this.stopReason === undefined && client?.isOpen) await client.request({ type: "shutdown" });
		client?.close();
	}

	/**
	 * Leave for another session: the worker stops when this was its only view and it has nothing
	 * to do (no run, heartbeat or schedule), else it goes on. Resolves once it has answered (and, when
	 * it stops, once it is gone).
	 */
	async release(): Promise<void> {
		const client = this.leave();
		if (this.stopReason === undefined && client?.isOpen) {
			const reply = await client.request({ type: "release" }, LEAVE_WAIT_MS);
			if (reply.ok && reply.data?.stopping) await client.closed;
		}
		client?.close();
	}

	/** Stop listening without a word to the worker (the supervisor is about to start it again). */
	abandon(): void {
		this.leave()?.close();
	}

	/** This view leaves (in whatever state it was): the connection it was on, if any. */
	private leave(): WorkerClient | undefined {
		const state = this.state;
		if (state.kind !== "left")
			this.state = { kind: "left", client: state.kind === "open" ? state.client : undefined, reason: this.stopReason };
		return this.client;
	}

	private restartingText(): string {
		const reason = this.state.kind === "reconnecting" ? this.state.reason : undefined;
		return reason
			? `The agent's worker is being started again (${reason}).`
			: "The agent's worker is restarting after it stopped unexpectedly.";
	}

	/** A request to the worker, answered with its kind's data; a `UserError` when it fails or the worker is away. */
	private async ask<K extends keyof WorkerRequests & string>(
		message: RequestOf<WorkerRequests, K>,
	): Promise<WorkerRequests[K]["reply"]> {
		const reason = this.stopReason;
		if (reason !== undefined)
			throw new UserError(
				`The agent's worker stopped (${reason}).`,
				`\`prime-agent attach ${this.agentKey}\` continues the session.`,
			);
		if (this.state.kind === "reconnecting") throw new UserError(this.restartingText(), AGAIN);
		const reply = await this.client?.request(message);
		if (!reply || (!reply.ok && reply.closed))
			throw new UserError("The agent's worker went away before it answered.", AGAIN);
		return unwrap(reply);
	}

	private onPush(message: WorkerPush): void {
		switch (message.type) {
			case "event":
				if (!(this.ownRunsOnly && message.own === false)) this.emit(message.event);
				return;
			case "status":
				this.current = message.status;
				this.emit({ type: "status" });
				return;
			case "still_busy":
				this.emit({ type: "still_busy", question: message.question as number });
				return;
			case "run_end": {
				if (message.state) this.current = message.state;
				const own = this.runs.get(message.id);
				this.runs.delete(message.id);
				if (own) own(message.end);
				else if (!this.ownRunsOnly) this.emit({ type: "run_end", ...message.end });
				return;
			}
			case "bye": {
				const state = this.state;
				if (state.kind === "open") state.bye = { reason: message.reason, restart: message.restart === true };
				else if (state.kind === "left") state.reason = message.reason;
				return;
			}
		}
	}

	private onClosed(client: WorkerClient): void {
		const state = this.state;
		if (client !== this.client) return;
		// Gone without a word (it crashed: the supervisor restarts it), or started again on another
		// model by another view: this view follows it there.
		if (state.kind === "open" && (!state.bye || state.bye.restart) && this.reconnect) {
			void this.follow(this.reconnect, state.bye?.reason);
			return;
		}
		const reason = this.stopReason ?? "the worker went away";
		this.endRuns(this.gone(reason));
		if (state.kind === "left") {
			state.reason = reason;
			return;
		}
		this.state = { kind: "stopped", reason };
		this.emit({ type: "bye", reason });
	}

	/**
	 * Emit `reconnecting`, then `reconnected` once the restarted worker answers (or `bye` when it
	 * will not). `restartReason`: the worker said it is being started again (not a crash).
	 */
	private async follow(reconnect: Reconnect, restartReason?: string): Promise<void> {
		this.state = { kind: "reconnecting", ...(restartReason ? { reason: restartReason } : {}) };
		this.endRuns(
			failed(
				restartReason
					? `The agent's worker stopped during this run: ${restartReason}.`
					: `The agent's worker stopped during this run; the supervisor restarts it from the session's last saved entry.`,
			),
		);
		this.current = { ...this.current, running: false };
		// Views report the runs that ended before they hear of the restart (their `prompt` answers come first).
		await new Promise((resolve) => setImmediate(resolve));
		if (this.hasLeft) return;
		this.emit({ type: "reconnecting", ...(restartReason ? { reason: restartReason } : {}) });
		const again = await reconnect(restartReason !== undefined).catch((error: Error) => ({ reason: error.message }));
		if (this.hasLeft) {
			if ("client" in again) again.client.close();
			return;
		}
		if ("reason" in again) {
			this.state = { kind: "stopped", reason: again.reason };
			this.emit({ type: "bye", reason: again.reason });
			return;
		}
		this.state = { kind: "open", client: again.client };
		this.current = again.welcome.status;
		this.listen(again.client);
		this.emit({ type: "reconnected", ...(restartReason ? { reason: restartReason } : {}) });
	}

	private endRuns(end: LinkRunEnd): void {
		for (const resolve of this.runs.values()) resolve(end);
		this.runs.clear();
	}

	private gone(reason: string): LinkRunEnd {
		return failed(
			`The agent's worker stopped (${reason}). \`prime-agent agents\` shows its state; \`prime-agent attach ${this.agentKey}\` continues the session.`,
		);
	}

	private emit(event: SessionEvent): void {
		if (this.early) this.early.push(event);
		for (const listener of this.listeners) listener(event);
	}
}

/** A run this view asked for that the worker's going ended (or never sent): said as `-p` and the views say a failure. */
function failed(message: string): LinkRunEnd {
	return { status: "error", exitCode: ExitCode.modelError, message, errorMessage: message };
}
