import { Dealer, Subscriber } from "zeromq";
import type { JupyterMessage, WireCodec } from "../wire/index.js";
import { type ConnectionInfo, channelAddress } from "./connection-file.js";

export type ChannelName = "shell" | "control" | "iopub";
export type MessageListener = (channel: ChannelName, message: JupyterMessage) => void;

/**
 * The host's sockets to one kernel: a Dealer each for shell and control, a Subscriber for iopub.
 * Incoming messages are verified by the codec (bad ones are dropped and counted there) and handed
 * to the listener. Sends are serialised per socket, as zeromq allows one send in flight at a time.
 */
export class KernelChannels {
	private readonly shell = new Dealer({ linger: 0 });
	private readonly control = new Dealer({ linger: 0 });
	private readonly iopub = new Subscriber({ linger: 0 });
	private readonly sendQueues = new Map<Dealer, Promise<void>>();
	private closed = false;

	constructor(
		info: ConnectionInfo,
		private readonly codec: WireCodec,
		private readonly listener: MessageListener,
	) {
		const address = (port: number) => channelAddress(info, port);
		this.iopub.subscribe();
		this.iopub.connect(address(info.iopub_port));
		this.shell.connect(address(info.shell_port));
		this.control.connect(address(info.control_port));
		this.receive("iopub", this.iopub);
		this.receive("shell", this.shell);
		this.receive("control", this.control);
	}

	/** Sends on shell or control; resolves once zeromq has queued the frames. */
	send(channel: "shell" | "control", frames: Buffer[]): Promise<void> {
		const socket = channel === "shell" ? this.shell : this.control;
		const previous = this.sendQueues.get(socket) ?? Promise.resolve();
		const next = previous.then(async () => {
			if (this.closed) throw new Error("the kernel connection is closed");
			await socket.send(frames);
		});
		// A failed send must not block the ones after it; the caller sees its own failure.
		this.sendQueues.set(
			socket,
			next.catch(() => {}),
		);
		return next;
	}

	close(): void {
		if (this.closed) return;
		this.closed = true;
		for (const socket of [this.shell, this.control, this.iopub]) socket.close();
	}

	private async receive(channel: ChannelName, socket: Dealer | Subscriber): Promise<void> {
		try {
			for await (const frames of socket) {
				const message = this.codec.decode(frames);
				if (!message) continue;
				try {
					this.listener(channel, message);
				} catch (error) {
					// One message that could not be handled must not silence the channel.
					process.emitWarning(`prime-agent-kernel: a ${channel} message could not be handled: ${String(error)}`);
				}
			}
		} catch {
			// The socket closed or failed; a dead kernel is noticed through its process exit.
		}
	}
}
