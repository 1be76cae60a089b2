import { rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { type ConnectionInfo, createConnectionFile, KernelChannels, readBoundPorts } from "../connection/index.js";
import { type KernelProcess, killOnHostExit, signalKernel, spawnKernelProcess } from "../process/index.js";
import { type MessageHeader, WireCodec } from "../wire/index.js";
import { describeExit, type KernelExit, KernelNotRunningError, KernelStartError } from "./errors.js";
import { KernelLink, within } from "./kernel-link.js";

export interface BootOptions {
	python: string;
	cwd?: string;
	baseEnv?: Record<string, string>;
	env?: Record<string, string>;
	pythonPath?: string[];
	readyTimeoutMs: number;
}

const PORT_POLL_MS = 15;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One kernel process and the host's connection to it. Replies on shell/control are matched to
 * requests by parent msg_id; iopub messages go to the listener registered for their parent.
 */
export class RunningKernel extends KernelLink {
	/** Resolves with the exit once the process has exited. */
	readonly exited: Promise<KernelExit>;

	private channels?: KernelChannels;
	private codec?: WireCodec;
	private readonly unregisterExitKill: () => void;

	private constructor(
		private readonly proc: KernelProcess,
		private readonly connectionDir: string,
	) {
		super();
		this.unregisterExitKill = killOnHostExit(() => {
			signalKernel(proc.child, "SIGKILL");
			rmSync(connectionDir, { recursive: true, force: true });
		});
		this.exited = proc.exited.then(async (exit) => {
			this.unregisterExitKill();
			this.channels?.close();
			this.recordExit(exit);
			// Awaited, so a host that exits right after shutdown() leaves no key behind.
			await rm(this.connectionDir, { recursive: true, force: true }).catch(() => {});
			return exit;
		});
	}

	get pid(): number | undefined {
		return this.proc.child.pid;
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
				kernel.throwIfEnded("during startup");
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

	/** SIGKILL to the kernel's process group, now. */
	kill(): void {
		signalKernel(this.proc.child, "SIGKILL");
		this.channels?.close();
	}

	/** Asks the kernel to shut down on control, and kills it if it has not exited within `graceMs`. */
	async stop(graceMs: number): Promise<void> {
		if (!this.alive) return;
		await this.request("control", "shutdown_request", { restart: false }, graceMs).catch(() => undefined);
		await within(this.exited, graceMs);
		this.kill();
		await this.exited;
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

	protected override throwIfEnded(when: string): void {
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
}
