import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import {
	type ChannelName,
	type ConnectionInfo,
	createConnectionFile,
	KernelChannels,
	readBoundPorts,
} from "../connection/index.js";
import {
	type KernelProcess,
	killOnHostExit,
	OUTPUT_ACK_EVERY,
	OUTPUT_CREDIT_COMM_ID,
	OUTPUT_PROBE_MSG_TYPE,
	OUTPUT_STAMP_METADATA_KEY,
	signalKernel,
	spawnKernelProcess,
} from "../process/index.js";
import { type JupyterMessage, type MessageHeader, WireCodec } from "../wire/index.js";
import { describeExit, type KernelExit, KernelNotRunningError, KernelStartError } from "./errors.js";

export interface BootOptions {
	python: string;
	cwd?: string;
	baseEnv?: Record<string, string>;
	env?: Record<string, string>;
	pythonPath?: string[];
	readyTimeoutMs: number;
}

type Listener = (message: JupyterMessage) => void;

const PORT_POLL_MS = 15;
/** How long to wait for iopub to show a kernel_info's status before asking again (SUB joins late). */
const IOPUB_JOIN_WAIT_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`'s value, or `undefined` after `ms`; the timer never outlives the race. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
	let timer: NodeJS.Timeout | undefined;
	const expired = new Promise<undefined>((resolve) => {
		timer = setTimeout(() => resolve(undefined), Math.max(0, ms));
	});
	return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/**
 * One kernel process and the host's connection to it. Replies on shell/control are matched to
 * requests by parent msg_id; iopub messages go to the listener registered for their parent.
 */
export class RunningKernel {
	/** Set once the process has exited. */
	exit?: KernelExit;
	/** Resolves with the exit once the process has exited. */
	readonly exited: Promise<KernelExit>;
	/** Every `comm_open` on iopub, whatever its parent (a cell, or a task that outlived its cell). */
	onCommOpen?: Listener;

	private readonly replyWaiters = new Map<string, Listener>();
	private readonly iopubListeners = new Map<string, Listener>();
	private readonly exitWaiters = new Set<(exit: KernelExit) => void>();
	private channels?: KernelChannels;
	private codec?: WireCodec;
	private readonly unregisterExitKill: () => void;
	/** The kernel's output position (its running totals) last acknowledged. */
	private acknowledged = { chars: 0, messages: 0 };

	private constructor(
		private readonly proc: KernelProcess,
		private readonly connectionDir: string,
	) {
		this.unregisterExitKill = killOnHostExit(() => {
			signalKernel(proc.child, "SIGKILL");
			rmSync(connectionDir, { recursive: true, force: true });
		});
		this.exited = proc.exited.then(async (exit) => {
			this.exit = exit;
			this.unregisterExitKill();
			this.channels?.close();
			for (const waiter of this.exitWaiters) waiter(exit);
			this.exitWaiters.clear();
			// Awaited, so a host that exits right after shutdown() leaves no key behind.
			await rm(this.connectionDir, { recursive: true, force: true }).catch(() => {});
			return exit;
		});
	}

	get pid(): number | undefined {
		return this.proc.child.pid;
	}

	get alive(): boolean {
		return this.exit === undefined;
	}

	get droppedMessages(): number {
		return this.codec?.dropped ?? 0;
	}

	/** Starts a kernel and resolves once it answered kernel_info on shell and showed it on iopub. */
	static async boot(options: BootOptions): Promise<RunningKernel> {
		const file = await createConnectionFile();
		const proc = spawnKernelProcess({
			python: options.python,
			connectionFile: file.path,
			cwd: options.cwd,
			baseEnv: options.baseEnv,
			env: options.env,
			pythonPath: options.pythonPath,
		});
		const kernel = new RunningKernel(proc, file.dir);
		const deadline = Date.now() + options.readyTimeoutMs;
		try {
			let info: ConnectionInfo | undefined;
			while (!info) {
				kernel.throwIfExited("during startup");
				if (Date.now() > deadline) throw kernel.timeout(options.readyTimeoutMs, "to bind its ports");
				info = await readBoundPorts(file.path, file.key);
				if (!info) await sleep(PORT_POLL_MS);
			}
			kernel.connect(info);
			await kernel.waitReady(deadline, options.readyTimeoutMs);
			return kernel;
		} catch (error) {
			kernel.kill();
			throw error;
		}
	}

	/** A fresh header for a message this host is about to send. */
	header(msgType: string): MessageHeader {
		if (!this.codec) throw new KernelNotRunningError("the kernel is not connected");
		return this.codec.header(msgType);
	}

	/**
	 * Sends a message under `header` (from `header()`, so callers can watch for its replies before
	 * anything can arrive). `parent` makes it a reply to that message.
	 */
	async send(
		channel: "shell" | "control",
		header: MessageHeader,
		content: Record<string, unknown>,
		parent?: Partial<MessageHeader>,
	): Promise<void> {
		if (!this.channels || !this.codec) throw new KernelNotRunningError("the kernel is not connected");
		await this.channels.send(channel, this.codec.encode(header, content, parent));
	}

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

	/** Calls `listener` when the process exits (at once if it already has); returns the unsubscribe. */
	onExit(listener: (exit: KernelExit) => void): () => void {
		if (this.exit) {
			listener(this.exit);
			return () => {};
		}
		this.exitWaiters.add(listener);
		return () => this.exitWaiters.delete(listener);
	}

	/** Sends a request and waits for its reply; rejects if the kernel exits or `timeoutMs` passes. */
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

	/** SIGKILL to the kernel's process group, now. */
	kill(): void {
		signalKernel(this.proc.child, "SIGKILL");
		this.channels?.close();
	}

	/** SIGINT to the kernel's process group (the fallback when control does not answer). */
	signalInterrupt(): void {
		signalKernel(this.proc.child, "SIGINT");
	}

	/** Last lines the process wrote outside of cells. */
	stderrTail(): string {
		return this.proc.stderrTail();
	}

	private connect(info: ConnectionInfo): void {
		this.codec = new WireCodec(info.key);
		this.channels = new KernelChannels(info, this.codec, (channel, message) => this.route(channel, message));
	}

	private route(channel: ChannelName, message: JupyterMessage): void {
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
		if (typeof chars !== "number" || typeof messages !== "number" || !this.codec) return;
		const due =
			chars - this.acknowledged.chars >= OUTPUT_ACK_EVERY.chars ||
			messages - this.acknowledged.messages >= OUTPUT_ACK_EVERY.messages;
		if (!now && !due) return;
		if (chars < this.acknowledged.chars && messages < this.acknowledged.messages) return;
		this.acknowledged = { chars, messages };
		const header = this.codec.header("comm_msg");
		this.send("control", header, { comm_id: OUTPUT_CREDIT_COMM_ID, data: { chars, messages } }).catch(() => {});
	}

	private async waitReady(deadline: number, readyTimeoutMs: number): Promise<void> {
		while (Date.now() < deadline) {
			this.throwIfExited("during startup");
			const header = this.header("kernel_info_request");
			let seen = () => {};
			const seenOnIopub = new Promise<boolean>((resolve) => {
				seen = () => resolve(true);
			});
			let replied = () => {};
			const reply = new Promise<boolean>((resolve) => {
				replied = () => resolve(true);
			});
			const stops = [this.watchIopub(header.msg_id, () => seen()), this.watchReply(header.msg_id, () => replied())];
			try {
				await this.send("shell", header, {});
				const answered = await within(Promise.race([reply, this.exited.then(() => false)]), deadline - Date.now());
				if (answered && (await within(seenOnIopub, IOPUB_JOIN_WAIT_MS))) return;
			} finally {
				for (const stop of stops) stop();
			}
		}
		this.throwIfExited("during startup");
		throw this.timeout(readyTimeoutMs, "to answer kernel_info");
	}

	private throwIfExited(when: string): void {
		if (!this.exit) return;
		const spawnError = this.proc.spawnError;
		if (spawnError) {
			throw new KernelStartError(`Cannot run the kernel interpreter (${spawnError.code ?? spawnError.message}).`);
		}
		const tail = this.stderrTail().trim();
		throw new KernelStartError(
			`The kernel process ${describeExit(this.exit)} ${when}.${tail ? `\nIts last output:\n${tail}` : ""}`,
		);
	}

	private timeout(ms: number, what: string): KernelStartError {
		const tail = this.stderrTail().trim();
		return new KernelStartError(
			`The kernel did not start within ${ms} ms (waiting for it ${what}). The machine may be overloaded: ` +
				`try again or raise readyTimeoutMs.${tail ? `\nIts last output:\n${tail}` : ""}`,
		);
	}
}
