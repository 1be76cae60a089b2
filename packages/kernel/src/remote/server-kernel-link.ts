import { randomUUID } from "node:crypto";
import type { Kernel as JupyterKernel, KernelMessage, ServerConnection } from "@jupyterlab/services";
import { KernelConnection } from "@jupyterlab/services/lib/kernel/default.js";
import { type KernelExit, KernelNotRunningError } from "../kernel/errors.js";
import { KernelLink, type LinkChannel, within } from "../kernel/kernel-link.js";
import type { JupyterServerOptions } from "../types.js";
import type { JupyterMessage, MessageHeader } from "../wire/index.js";
import { PROTOCOL_VERSION } from "../wire/message.js";
import {
	checkServer,
	deleteServerKernel,
	displayUrl,
	interruptServerKernel,
	type ServerKernelModel,
	serverKernelModel,
	serverSettings,
	startServerKernel,
} from "./server-api.js";

/** Comm id of the host's heartbeat on control; the kernel ends itself when beats stop (`heartbeat.py`). */
export const HEARTBEAT_COMM_ID = "prime.host.heartbeat";
/** A kernel on a server ends itself after this long without its host's heartbeat. */
export const HOST_GONE_AFTER_MS = 60_000;
/** After a dropped WebSocket, how long the one reconnection may take before the kernel counts as lost. */
const RECONNECT_WAIT_MS = 20_000;

export interface ServerBootOptions {
	server: JupyterServerOptions;
	readyTimeoutMs: number;
	/** How long the kernel waits for a heartbeat before ending itself. Default HOST_GONE_AFTER_MS. */
	hostGoneAfterMs?: number;
}

/**
 * A kernel on a Jupyter Server (or Enterprise Gateway), driven through @jupyterlab/services: made
 * with `POST /api/kernels`, its messages carried by the `channels` WebSocket (which carries shell,
 * control and iopub: host replies and output acknowledgements travel on control as locally), and
 * deleted with `DELETE /api/kernels/<id>`.
 *
 * The kernel has ended (`exit`) when the server restarted it after a crash (its variables are
 * gone: it is deleted, and `Kernel.restart()` starts a fresh one), reports it dead, it is deleted,
 * or the WebSocket drops a second time or does not come back within RECONNECT_WAIT_MS. A drop is
 * survived once: the client reconnects with the same session, and the server replays the output
 * it buffered meanwhile.
 */
export class ServerKernelLink extends KernelLink {
	readonly exited: Promise<KernelExit>;
	readonly pid = undefined;
	readonly droppedMessages = 0;
	readonly where: string;

	private resolveExited!: (exit: KernelExit) => void;
	private connection?: KernelConnection;
	private readonly session = randomUUID();
	private connected = false;
	private drops = 0;
	private reconnectTimer?: NodeJS.Timeout;
	private heartbeat?: NodeJS.Timeout;
	private deleting?: Promise<void>;

	private constructor(
		readonly model: ServerKernelModel,
		private readonly options: ServerBootOptions,
		private readonly settings: ServerConnection.ISettings,
	) {
		super();
		this.where = displayUrl(options.server.url);
		this.exited = new Promise((resolve) => {
			this.resolveExited = resolve;
		});
	}

	get kernelId(): string {
		return this.model.id;
	}

	get kernelName(): string {
		return this.model.name;
	}

	/** Makes the kernel on the server, connects, and resolves once it answered kernel_info. */
	static async boot(options: ServerBootOptions): Promise<ServerKernelLink> {
		const settings = serverSettings(options.server);
		await checkServer(options.server, settings);
		const model = await startServerKernel(options.server, settings);
		const link = new ServerKernelLink(model, options, settings);
		const deadline = Date.now() + options.readyTimeoutMs;
		try {
			await link.connect(deadline);
			await link.waitReady(deadline, options.readyTimeoutMs);
			link.startHeartbeat();
			return link;
		} catch (error) {
			link.kill();
			await link.exited;
			throw error;
		}
	}

	header(msgType: string): MessageHeader {
		return {
			msg_id: randomUUID(),
			msg_type: msgType,
			session: this.session,
			username: "prime-agent",
			date: new Date().toISOString(),
			version: PROTOCOL_VERSION,
		};
	}

	async send(
		channel: "shell" | "control",
		header: MessageHeader,
		content: Record<string, unknown>,
		parent?: Partial<MessageHeader>,
	): Promise<void> {
		const connection = this.connection;
		if (!connection || this.exit) throw new KernelNotRunningError("the kernel on the server is not connected");
		const message = {
			header,
			parent_header: parent ?? {},
			metadata: {},
			content,
			channel,
			buffers: [],
		} as unknown as KernelMessage.IShellControlMessage;
		const future =
			channel === "shell"
				? connection.sendShellMessage(message as KernelMessage.IShellMessage, false, true)
				: connection.sendControlMessage(message as KernelMessage.IControlMessage, false, true);
		// Replies are routed by msg_id (see `route`); the future is only the library's bookkeeping,
		// and rejects when disposed early.
		future.done.catch(() => {});
	}

	kill(): void {
		this.end({ code: null, signal: null, reason: `was deleted on the server ${this.where}` });
	}

	signalInterrupt(): void {
		if (!this.exit) void interruptServerKernel(this.options.server, this.kernelId, this.settings).catch(() => {});
	}

	/** Deleting the kernel is the polite stop: the server asks it to shut down, then kills it. */
	async stop(_graceMs: number): Promise<void> {
		this.kill();
		await this.exited;
	}

	stderrTail(): string {
		return "";
	}

	/**
	 * The kernel has ended: stops the heartbeat, closes the WebSocket and deletes the kernel on the
	 * server (a crashed one the server restarted empty, or one whose link was lost, would
	 * otherwise run on there); `exited` resolves once the server answered.
	 */
	private end(exit: KernelExit): void {
		if (this.deleting) return;
		this.recordExit(exit);
		clearInterval(this.heartbeat);
		clearTimeout(this.reconnectTimer);
		const connection = this.connection;
		if (connection) {
			// The client reconnects by itself after the server restarted a crashed kernel, right
			// after telling us (a promise nobody awaits, rejected once disposed): an ended link
			// never reconnects.
			connection.reconnect = () => Promise.resolve();
			// Not from inside the library's own status signal: it arms its reconnect timer after
			// emitting, and a timer armed on a disposed connection throws when it fires.
			setImmediate(() => connection.dispose());
		}
		this.deleting = deleteServerKernel(this.options.server, this.kernelId, this.settings).catch(() => {});
		void this.deleting.then(() => this.resolveExited(exit));
	}

	private async connect(deadline: number): Promise<void> {
		const connection = new KernelConnection({
			model: this.model,
			serverSettings: this.settings,
			handleComms: false,
			clientId: this.session,
			username: "prime-agent",
		});
		this.connection = connection;
		connection.anyMessage.connect((_sender, args) => {
			if (args.direction === "recv") this.receive(args.msg);
		});
		connection.statusChanged.connect((_sender, status) => this.onStatus(status));
		const opened = new Promise<boolean>((resolve) => {
			connection.connectionStatusChanged.connect((_sender, status) => {
				this.onConnectionStatus(status);
				if (status === "connected") resolve(true);
			});
		});
		const ended = new Promise<boolean>((resolve) => this.onExit(() => resolve(false)));
		const ok = await within(Promise.race([opened, ended]), deadline - Date.now());
		this.throwIfEnded("while connecting");
		if (!ok) throw this.timeout(this.options.readyTimeoutMs, `to accept a WebSocket at ${this.where}`);
	}

	private receive(message: KernelMessage.IMessage): void {
		const channel = message.channel as LinkChannel;
		if (channel !== "shell" && channel !== "control" && channel !== "iopub") return;
		const converted: JupyterMessage = {
			identities: [],
			header: message.header as unknown as MessageHeader,
			parent_header: message.parent_header as Partial<MessageHeader>,
			metadata: (message.metadata ?? {}) as Record<string, unknown>,
			content: message.content as Record<string, unknown>,
			buffers: (message.buffers ?? []).map((buffer) =>
				ArrayBuffer.isView(buffer)
					? Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength)
					: Buffer.from(buffer as ArrayBuffer),
			),
		};
		this.route(channel, converted);
	}

	/** The server's word on the kernel: restarted after a crash (state gone), or dead. */
	private onStatus(status: JupyterKernel.Status): void {
		if (status === "autorestarting") {
			this.end({
				code: null,
				signal: null,
				reason: `died on the server ${this.where} (the server put an empty kernel in its place, which was deleted)`,
			});
		} else if (status === "dead") {
			this.end({ code: null, signal: null, reason: `died on the server ${this.where}` });
		}
	}

	/** One dropped WebSocket is reconnected; a second drop, or no reconnection in time, loses the kernel. */
	private onConnectionStatus(status: JupyterKernel.ConnectionStatus): void {
		if (this.exit) return;
		if (status === "connected") {
			this.connected = true;
			clearTimeout(this.reconnectTimer);
			if (this.drops > 0) this.reconnected();
			return;
		}
		if (status === "disconnected") {
			this.lose("was closed by the server");
			return;
		}
		if (!this.connected) return;
		this.connected = false;
		this.drops += 1;
		if (this.drops > 1) {
			this.lose("dropped a second time");
			return;
		}
		this.reconnectTimer = setTimeout(
			() => this.lose(`did not come back within ${RECONNECT_WAIT_MS / 1000} s`),
			RECONNECT_WAIT_MS,
		);
	}

	private lose(why: string): void {
		this.end({
			code: null,
			signal: null,
			reason: `lost its connection to ${this.where} (the WebSocket ${why}) and was deleted there`,
		});
	}

	/**
	 * A kernel deleted on the server by someone else (another client, an administrator, the
	 * server's culler) leaves the WebSocket open and silent: asked with each heartbeat.
	 */
	private checkStillThere(): void {
		void serverKernelModel(this.options.server, this.kernelId, this.settings).then(
			(model) => {
				if (!model) {
					this.end({
						code: null,
						signal: null,
						reason: `was deleted on the server ${this.where} by another client (or the server's culler)`,
					});
				} else if (model.execution_state === "dead") {
					this.end({ code: null, signal: null, reason: `died on the server ${this.where}` });
				}
			},
			// The server did not answer: the WebSocket's own checks decide.
			() => {},
		);
	}

	private startHeartbeat(): void {
		const every = Math.min(10_000, Math.max(250, (this.options.hostGoneAfterMs ?? HOST_GONE_AFTER_MS) / 6));
		this.heartbeat = setInterval(() => {
			if (!this.connected) return;
			this.send("control", this.header("comm_msg"), { comm_id: HEARTBEAT_COMM_ID, data: {} }).catch(() => {});
			this.checkStillThere();
		}, every);
		this.heartbeat.unref();
	}
}
