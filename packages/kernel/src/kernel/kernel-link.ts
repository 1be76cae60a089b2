import {
	OUTPUT_ACK_EVERY,
	OUTPUT_CREDIT_COMM_ID,
	OUTPUT_PROBE_MSG_TYPE,
	OUTPUT_STAMP_METADATA_KEY,
} from "../process/index.js";
import type { JupyterMessage, MessageHeader } from "../wire/index.js";
import { describeExit, type KernelExit, KernelNotRunningError, KernelStartError } from "./errors.js";

export type Listener = (message: JupyterMessage) => void;
export type LinkChannel = "shell" | "control" | "iopub";

/** How long to wait for iopub to show a kernel_info's status before asking again (SUB joins late). */
const IOPUB_JOIN_WAIT_MS = 250;

/** `promise`'s value, or `undefined` after `ms`; the timer never outlives the race. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
	let timer: NodeJS.Timeout | undefined;
	const expired = new Promise<undefined>((resolve) => {
		timer = setTimeout(() => resolve(undefined), Math.max(0, ms));
	});
	return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/**
 * The host's link to one running kernel, wherever it runs: a local process over zeromq
 * (`RunningKernel`) or a kernel on a Jupyter Server over its WebSocket (`remote/`). What `Kernel`
 * and `CellRun` need is here, the same for both: replies on shell/control are matched to requests
 * by parent msg_id, iopub messages go to the listener registered for their parent, `comm_open`s
 * (host requests) to `onCommOpen`, and the kernel's stream output is acknowledged (flow control).
 * A subclass carries the messages and says when the kernel is gone (`recordExit`).
 */
export abstract class KernelLink {
	/** Set once the kernel has ended (exited, died on its server, or its link was lost). */
	exit?: KernelExit;
	/** Resolves with the exit once the kernel has ended and what it held is released. */
	abstract readonly exited: Promise<KernelExit>;
	/** Every `comm_open` on iopub, whatever its parent (a cell, or a task that outlived its cell). */
	onCommOpen?: Listener;

	private readonly replyWaiters = new Map<string, Listener>();
	private readonly iopubListeners = new Map<string, Listener>();
	private readonly exitWaiters = new Set<(exit: KernelExit) => void>();
	private readonly reconnectListeners = new Set<() => void>();
	/** The kernel's output position (its running totals) last acknowledged. */
	private acknowledged = { chars: 0, messages: 0 };

	/** The local process id; undefined for a kernel on a server. */
	abstract readonly pid: number | undefined;
	/** Incoming messages dropped as forged or malformed. */
	abstract readonly droppedMessages: number;

	get alive(): boolean {
		return this.exit === undefined;
	}

	/** A fresh header for a message this host is about to send. */
	abstract header(msgType: string): MessageHeader;

	/**
	 * Sends a message under `header` (from `header()`, so callers can watch for its replies before
	 * anything can arrive). `parent` makes it a reply to that message.
	 */
	abstract send(
		channel: "shell" | "control",
		header: MessageHeader,
		content: Record<string, unknown>,
		parent?: Partial<MessageHeader>,
	): Promise<void>;

	/** Ends the kernel now (SIGKILL of a process; deleting a kernel on a server). */
	abstract kill(): void;

	/** The interrupt used when control does not answer (SIGINT; the server's interrupt endpoint). */
	abstract signalInterrupt(): void;

	/** Stops the kernel politely, then for sure; resolves once it has ended. */
	abstract stop(graceMs: number): Promise<void>;

	/** Last lines the kernel wrote outside of cells, when the host can see them. */
	abstract stderrTail(): string;

	/** Routes iopub messages whose parent is `msgId` to `listener` until the returned function is called. */
	watchIopub(msgId: string, listener: Listener): () => void {
		this.iopubListeners.set(msgId, listener);
		return () => this.iopubListeners.delete(msgId);
	}

	/** Calls `listener` with the reply to `msgId` (on shell or control) until the returned function is called. */
	watchReply(msgId: string, listener: Listener): () => void {
		this.replyWaiters.set(msgId, listener);
		return () => this.replyWaiters.delete(msgId);
	}

	/** Calls `listener` when the kernel ends (at once if it already has); returns the unsubscribe. */
	onExit(listener: (exit: KernelExit) => void): () => void {
		if (this.exit) {
			listener(this.exit);
			return () => {};
		}
		this.exitWaiters.add(listener);
		return () => this.exitWaiters.delete(listener);
	}

	/**
	 * Calls `listener` each time the link came back after a drop (a kernel on a server: messages
	 * in flight at the drop may be lost both ways); returns the unsubscribe.
	 */
	onReconnect(listener: () => void): () => void {
		this.reconnectListeners.add(listener);
		return () => this.reconnectListeners.delete(listener);
	}

	/** Sends a request and waits for its reply; rejects if the kernel ends or `timeoutMs` passes. */
	request(
		channel: "shell" | "control",
		msgType: string,
		content: Record<string, unknown>,
		timeoutMs: number,
	): Promise<JupyterMessage | undefined> {
		return new Promise((resolve, reject) => {
			let stopWatching = () => {};
			let stopExit = () => {};
			const timer = setTimeout(() => finish(undefined), timeoutMs);
			const finish = (reply: JupyterMessage | undefined, error?: Error) => {
				clearTimeout(timer);
				stopWatching();
				stopExit();
				if (error) reject(error);
				else resolve(reply);
			};
			stopExit = this.onExit((exit) =>
				finish(undefined, new KernelNotRunningError(`the kernel ${describeExit(exit)}`)),
			);
			if (this.exit) return;
			const header = this.header(msgType);
			stopWatching = this.watchReply(header.msg_id, (reply) => finish(reply));
			this.send(channel, header, content).catch((error: Error) => finish(undefined, error));
		});
	}

	/** The kernel has ended: sets `exit` and tells every waiter, once. */
	protected recordExit(exit: KernelExit): void {
		if (this.exit) return;
		this.exit = exit;
		for (const waiter of this.exitWaiters) waiter(exit);
		this.exitWaiters.clear();
	}

	/** The link is back after a drop: tells whoever may have lost a message. */
	protected reconnected(): void {
		for (const listener of [...this.reconnectListeners]) listener();
	}

	/** Hands one incoming message to whoever waits for it. */
	protected route(channel: LinkChannel, message: JupyterMessage): void {
		const parentId = message.parent_header.msg_id;
		if (channel !== "iopub") {
			if (parentId) this.replyWaiters.get(parentId)?.(message);
			return;
		}
		if (message.header.msg_type === "stream") this.acknowledgeStream(message);
		if (message.header.msg_type === OUTPUT_PROBE_MSG_TYPE) {
			this.acknowledge(message.content, true);
			return;
		}
		if (message.header.msg_type === "comm_open") {
			this.onCommOpen?.(message);
			return;
		}
		if (parentId) this.iopubListeners.get(parentId)?.(message);
	}

	/**
	 * Flow control: tells the kernel which position of its output (the running totals stamped on
	 * each stream message) has been read, so it may send more. A position, not an amount: a message
	 * lost on the way cannot leave the kernel waiting for an acknowledgement that never comes.
	 */
	private acknowledgeStream(message: JupyterMessage): void {
		this.acknowledge(message.metadata?.[OUTPUT_STAMP_METADATA_KEY], false);
	}

	private acknowledge(position: unknown, now: boolean): void {
		const { chars, messages } = (position ?? {}) as { chars?: unknown; messages?: unknown };
		if (typeof chars !== "number" || typeof messages !== "number" || !this.alive) return;
		const due =
			chars - this.acknowledged.chars >= OUTPUT_ACK_EVERY.chars ||
			messages - this.acknowledged.messages >= OUTPUT_ACK_EVERY.messages;
		if (!now && !due) return;
		if (chars < this.acknowledged.chars && messages < this.acknowledged.messages) return;
		this.acknowledged = { chars, messages };
		this.send("control", this.header("comm_msg"), {
			comm_id: OUTPUT_CREDIT_COMM_ID,
			data: { chars, messages },
		}).catch(() => {});
	}

	/** Resolves once the kernel answered kernel_info on shell and showed it on iopub. */
	protected async waitReady(deadline: number, readyTimeoutMs: number): Promise<void> {
		while (Date.now() < deadline) {
			this.throwIfEnded("during startup");
			const header = this.header("kernel_info_request");
			let seen = () => {};
			const seenOnIopub = new Promise<boolean>((resolve) => {
				seen = () => resolve(true);
			});
			let replied = () => {};
			const reply = new Promise<boolean>((resolve) => {
				replied = () => resolve(true);
			});
			const ended = new Promise<boolean>((resolve) => this.onExit(() => resolve(false)));
			const stops = [this.watchIopub(header.msg_id, () => seen()), this.watchReply(header.msg_id, () => replied())];
			try {
				await this.send("shell", header, {});
				const answered = await within(Promise.race([reply, ended]), deadline - Date.now());
				if (answered && (await within(seenOnIopub, IOPUB_JOIN_WAIT_MS))) return;
			} finally {
				for (const stop of stops) stop();
			}
		}
		this.throwIfEnded("during startup");
		throw this.timeout(readyTimeoutMs, "to answer kernel_info");
	}

	/** Throws a KernelStartError saying how the kernel ended, when it has. */
	protected throwIfEnded(when: string): void {
		if (!this.exit) return;
		const tail = this.stderrTail().trim();
		throw new KernelStartError(
			`The kernel ${describeExit(this.exit)} ${when}.${tail ? `\nIts last output:\n${tail}` : ""}`,
		);
	}

	protected timeout(ms: number, what: string): KernelStartError {
		const tail = this.stderrTail().trim();
		return new KernelStartError(
			`The kernel did not start within ${ms} ms (waiting for it ${what}). The machine may be overloaded: ` +
				`try again or raise readyTimeoutMs.${tail ? `\nIts last output:\n${tail}` : ""}`,
		);
	}
}
