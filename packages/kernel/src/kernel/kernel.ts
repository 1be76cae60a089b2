import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { HOST_REQUEST_TARGET, HostRequestRegistry } from "../host-requests/index.js";
import { OUTPUT_WINDOW_CHARS, PYTHON_PACKAGE_DIR } from "../process/index.js";
import { bootstrapCode, HOST_GONE_AFTER_MS, parseAttached, ServerKernelLink } from "../remote/index.js";
import { KernelSetupError, resolveKernelPython, SETUP_HINT } from "../setup/index.js";
import type {
	CellResult,
	ExecuteOptions,
	HostRequestHandler,
	JupyterServerOptions,
	KernelLocation,
	KernelStartOptions,
} from "../types.js";
import type { JupyterMessage } from "../wire/index.js";
import { CellRun, type StopReason } from "./cell-run.js";
import { describeExit, type KernelExit, KernelNotRunningError, KernelStartError } from "./errors.js";
import type { KernelLink } from "./kernel-link.js";
import { RunningKernel } from "./running-kernel.js";

/** Comm ids of `notify_host` calls start so: the handler runs, no reply is sent. */
const NOTIFY_COMM_PREFIX = "notify-";

/** The second cell of a kernel on a server (see `attach.py`'s `bound_output`). */
const BOUND_OUTPUT_CODE = "from prime_kernel.attach import bound_output\nbound_output()\ndel bound_output";

const SHUT_DOWN = "This kernel was shut down; start a new one with Kernel.start().";

const DEFAULTS = {
	memoryOutputLimit: 1 << 20,
	readyTimeoutMs: 30_000,
	interruptReplyMs: 1_000,
	stillBusyAfterMs: 5_000,
	shutdownGraceMs: 2_000,
	idleGraceMs: 5_000,
	hostRequestTimeoutMs: 600_000,
};
/** Python waits this much longer than the host's handler timeout, so the host's error reply comes first. */
const PYTHON_WAIT_MARGIN_MS = 30_000;

/**
 * A real IPython kernel. `execute` queues cells and runs them one at a time. A kernel that dies
 * is not restarted behind the caller's back: the cell running at the time ends with status
 * `died`, later `execute` calls reject with KernelNotRunningError, and `restart()` brings a fresh
 * kernel (same options, `startupCode` run again).
 *
 * Like a server socket, a live kernel keeps the host's event loop alive: call `shutdown()` (or
 * `kill()`) when done. Whenever the host exits, its kernels are killed.
 *
 * Events: `"died"` when the process exits without being asked to (crash, external kill; not
 * after `shutdown()`, `restart()` or `kill()`).
 */
export class Kernel {
	private current?: KernelLink;
	/** Start, restart and shutdown, one after the other: two at once would leak a kernel. */
	private lifecycle: Promise<void> = Promise.resolve();
	private queue: Promise<void> = Promise.resolve();
	private running?: CellRun;
	private cellSeq = 0;
	private droppedBefore = 0;
	/** Why the current process is being stopped, when the host asked for it (not a crash). */
	private stopping?: StopReason;
	private closed = false;
	private readonly requests: HostRequestRegistry;
	private readonly python: string;
	private outputDir?: string;
	private ownsOutputDir = false;
	private where?: KernelLocation;
	/** Where a kernel on a server saves what it cuts (a folder on its machine, see `CellRunOptions`). */
	private kernelOutputDir?: string;

	private readonly diedListeners = new Set<(info: KernelExit) => void>();

	private constructor(private readonly options: KernelStartOptions) {
		this.python = options.python ?? resolveKernelPython();
		this.requests = new HostRequestRegistry(this.hostRequestTimeoutMs);
	}

	private get hostRequestTimeoutMs(): number {
		return this.options.hostRequestTimeoutMs ?? DEFAULTS.hostRequestTimeoutMs;
	}

	/** Starts a kernel; resolves once it answered kernel_info and ran `startupCode`. */
	static async start(options: KernelStartOptions = {}): Promise<Kernel> {
		const kernel = new Kernel(options);
		await kernel.boot();
		return kernel;
	}

	get pid(): number | undefined {
		return this.current?.alive ? this.current.pid : undefined;
	}

	get alive(): boolean {
		return this.current?.alive ?? false;
	}

	/** Where the kernel runs: this machine, or a kernel on a Jupyter Server (its machine and folder there). */
	get location(): KernelLocation {
		return this.where ?? { kind: "local", hostname: hostname(), cwd: resolve(this.options.cwd ?? process.cwd()) };
	}

	/** Incoming messages dropped for a bad signature, over every process this kernel has had. */
	get droppedMessages(): number {
		return this.droppedBefore + (this.current?.droppedMessages ?? 0);
	}

	/** Calls `listener` when the kernel process exits without being asked to (crash, external kill). */
	on(_event: "died", listener: (info: KernelExit) => void): this {
		this.diedListeners.add(listener);
		return this;
	}

	off(_event: "died", listener: (info: KernelExit) => void): this {
		this.diedListeners.delete(listener);
		return this;
	}

	/**
	 * Runs `code` after every cell queued before it. Resolves with the cell's result (status `ok`,
	 * `error`, `aborted` or `died`); rejects with KernelNotRunningError when the kernel is not
	 * running when the cell's turn comes (call `restart()`).
	 */
	execute(code: string, options: ExecuteOptions = {}): Promise<CellResult> {
		if (typeof code !== "string") {
			return Promise.reject(
				new TypeError(`execute(code) takes the cell's Python code as a string, not ${describeValue(code)}.`),
			);
		}
		const turn = this.queue.then(() => this.runCell(code, options));
		this.queue = turn.then(
			({ run }) => run?.settled,
			() => {},
		);
		return turn.then(({ result }) => result);
	}

	/**
	 * Interrupts the running cell through the control channel (SIGINT if control does not answer);
	 * the kernel keeps its state. Resolves once the cell ended, or with `stillBusy: true` when the
	 * kernel is still busy some seconds later (stuck in code that ignores SIGINT): the caller may
	 * wait, or `kill()`/`restart()`.
	 */
	async interrupt(): Promise<{ stillBusy: boolean }> {
		const run = this.running;
		const kernel = this.current;
		if (!run || run.finished || !kernel?.alive) return { stillBusy: false };
		run.interrupted = true;
		const reply = await kernel
			.request("control", "interrupt_request", {}, DEFAULTS.interruptReplyMs)
			.catch(() => undefined);
		if (!reply && kernel.alive) kernel.signalInterrupt();
		const graceMs = this.options.stillBusyAfterMs ?? DEFAULTS.stillBusyAfterMs;
		const ended = await Promise.race([
			run.settled.then(() => true),
			new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
		]);
		if (ended) return { stillBusy: false };
		run.reportStillBusy();
		return { stillBusy: true };
	}

	/** Replaces the kernel process with a fresh one (same options, `startupCode` rerun); all state is lost. */
	async restart(): Promise<void> {
		if (this.closed) throw new KernelNotRunningError(SHUT_DOWN);
		await this.boot(() => this.stopProcess("restart"));
	}

	/** Asks the kernel to shut down, kills it if it has not exited in time, and releases its resources. */
	async shutdown(): Promise<void> {
		this.closed = true;
		await this.inTurn(() => this.stopProcess("shutdown"));
		if (this.ownsOutputDir && this.outputDir) await rm(this.outputDir, { recursive: true, force: true });
	}

	/** SIGKILL to the kernel (and its subprocesses) now. `restart()` starts a fresh one. */
	kill(): void {
		const current = this.current;
		if (!current?.alive) return;
		this.stopping = "kill";
		current.kill();
	}

	/**
	 * Answers `await host_request(type, payload)` from Python with `handler`. Returns the function
	 * that unregisters it. See HostRequestHandler for the reply shape.
	 */
	onHostRequest(type: string, handler: HostRequestHandler): () => void {
		return this.requests.register(type, handler);
	}

	private async runCell(code: string, options: ExecuteOptions): Promise<{ result: CellResult; run?: CellRun }> {
		await this.lifecycle;
		const kernel = this.current;
		if (this.closed) throw new KernelNotRunningError(SHUT_DOWN);
		if (!kernel?.alive) {
			const why = kernel?.exit ? `its process ${describeExit(kernel.exit)}` : "it was shut down";
			throw new KernelNotRunningError(
				`The kernel is not running (${why}); its variables are gone. Call restart() to start a fresh kernel.`,
			);
		}
		if (options.signal?.aborted) {
			return {
				result: {
					status: "aborted",
					stdout: "",
					stderr: "",
					displays: [],
					truncated: { stdout: false, stderr: false },
					fullOutputBytes: 0,
					durationMs: 0,
				},
			};
		}
		const run = new CellRun(kernel, code, {
			...options,
			outputDir: () => this.outputDirectory(),
			kernelOutputDir: this.kernelOutputDir,
			memoryOutputLimit: this.options.memoryOutputLimit ?? DEFAULTS.memoryOutputLimit,
			name: this.nextOutputName("cell"),
			idleGraceMs: DEFAULTS.idleGraceMs,
			stopReason: () => this.stopping,
			onServer: this.options.jupyterServer !== undefined,
		});
		this.running = run;
		const onAbort = () => void this.interrupt();
		options.signal?.addEventListener("abort", onAbort, { once: true });
		void run.settled.then(() => {
			options.signal?.removeEventListener("abort", onAbort);
			if (this.running === run) this.running = undefined;
		});
		await run.start();
		return { result: await run.result, run };
	}

	/** A file-name stem unique even among kernels sharing one output directory. */
	private nextOutputName(kind: string): string {
		return `${kind}-${++this.cellSeq}-${randomBytes(4).toString("hex")}`;
	}

	/** The output directory, created (0700) the first time a cell has a file to write. */
	private outputDirectory(): string {
		const dir = this.outputDirPath();
		// Made again each time: a folder removed while the kernel runs (a temp cleaner) comes back.
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		return dir;
	}

	/** The output directory's absolute path (the kernel writes there too); the default one is made here. */
	private outputDirPath(): string {
		if (!this.outputDir) {
			if (this.options.outputDir) this.outputDir = resolve(this.options.outputDir);
			else {
				this.outputDir = mkdtempSync(join(tmpdir(), "prime-kernel-output-"));
				this.ownsOutputDir = true;
			}
		}
		return this.outputDir;
	}

	/** Tells the kernel where to save what it cuts from large errors and displays, when there is a folder. */
	private outputDirEnv(): Record<string, string> {
		try {
			return { PRIME_KERNEL_OUTPUT_DIR: this.outputDirPath() };
		} catch {
			// No temp folder now: the kernel makes its own when it needs one.
			return {};
		}
	}

	/** Starts a process, after `before` (stopping the old one); cells wait for the whole of it. */
	private boot(before?: () => Promise<void>): Promise<void> {
		return this.inTurn(async () => {
			if (this.closed && this.current) {
				throw new KernelNotRunningError(SHUT_DOWN);
			}
			if (before) await before();
			const kernel = await this.bootProcess();
			this.droppedBefore += this.current?.droppedMessages ?? 0;
			this.current = kernel;
			this.stopping = undefined;
		});
	}

	/** Runs `step` after every start, restart and shutdown asked for before it. */
	private inTurn(step: () => Promise<void>): Promise<void> {
		const turn = this.lifecycle.then(step);
		this.lifecycle = turn.catch(() => {});
		return turn;
	}

	private async bootProcess(): Promise<KernelLink> {
		const server = this.options.jupyterServer;
		const kernel = server ? await this.bootOnServer(server) : await this.bootLocal();
		kernel.onCommOpen = (message) => this.answerHostRequest(kernel, message);
		// At the exit itself (before the connection folder is cleaned up), as the running cell learns it.
		kernel.onExit((exit) => {
			if (this.current !== kernel || this.stopping) return;
			for (const listener of this.diedListeners) {
				try {
					listener(exit);
				} catch (error) {
					process.emitWarning(`prime-agent-kernel: a "died" listener threw: ${String(error)}`);
				}
			}
		});
		if (this.options.startupCode) {
			const result = await this.runSilently(kernel, this.options.startupCode, "startup");
			if (result.status !== "ok") {
				kernel.kill();
				const detail = result.error ? `${result.error.ename}: ${result.error.evalue}` : result.status;
				throw new KernelStartError(`The kernel's startupCode failed (${detail}); fix it and start again.`);
			}
		}
		return kernel;
	}

	private async bootLocal(): Promise<KernelLink> {
		const cwd = this.options.cwd;
		if (cwd && !existsSync(cwd)) {
			throw new KernelStartError(
				`The kernel's working directory ${cwd} does not exist; create it or pass another cwd.`,
			);
		}
		try {
			return await RunningKernel.boot({
				python: this.python,
				cwd: this.options.cwd,
				baseEnv: this.options.baseEnv,
				env: { ...this.options.env, ...this.outputDirEnv(), ...this.hostRequestEnv() },
				pythonPath: this.options.pythonPath,
				readyTimeoutMs: this.options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs,
			});
		} catch (error) {
			throw this.explainStartFailure(error);
		}
	}

	/**
	 * A kernel on a Jupyter Server: made there, then its first cell receives the kernel package's
	 * Python and the `pythonPath` folders and attaches (see `remote/bootstrap.ts`). The host's own
	 * environment (`baseEnv`) never travels: only `env` is set there.
	 */
	private async bootOnServer(server: JupyterServerOptions): Promise<KernelLink> {
		const hostGoneAfterMs = server.hostGoneAfterMs ?? HOST_GONE_AFTER_MS;
		const link = await ServerKernelLink.boot({
			server,
			readyTimeoutMs: this.options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs,
			hostGoneAfterMs,
		});
		let code: string;
		try {
			code = bootstrapCode({
				folders: [PYTHON_PACKAGE_DIR, ...(this.options.pythonPath ?? [])],
				env: {
					...this.options.env,
					...this.hostRequestEnv(),
					PRIME_KERNEL_OUTPUT_WINDOW: String(OUTPUT_WINDOW_CHARS),
				},
				hostGoneAfterS: hostGoneAfterMs / 1000,
			});
		} catch (error) {
			await link.stop(0);
			throw error;
		}
		const result = await this.runSilently(link, code, "attach");
		const attached = parseAttached(result.stdout);
		if (result.status !== "ok" || !attached) {
			await link.stop(0);
			const detail = result.error
				? `${result.error.ename}: ${result.error.evalue}`
				: result.status === "ok"
					? "it printed no answer"
					: describeStatus(result.status, link);
			throw new KernelStartError(
				`The kernel on ${link.where} could not load prime-agent's kernel runtime (${detail}). Its kernelspec must be an IPython kernel (ipykernel 6 or later); see the README's "Kernels on a Jupyter Server".`,
			);
		}
		// Not in the attaching cell: IPython restores the streams it found when a cell began.
		const bounded = await this.runSilently(link, BOUND_OUTPUT_CODE, "attach");
		if (bounded.status !== "ok") {
			await link.stop(0);
			const detail = bounded.error
				? `${bounded.error.ename}: ${bounded.error.evalue}`
				: describeStatus(bounded.status, link);
			throw new KernelStartError(`The kernel on ${link.where} could not bound its output streams (${detail}).`);
		}
		this.kernelOutputDir = attached.output_dir || undefined;
		this.where = {
			kind: "jupyter-server",
			url: link.where,
			kernelId: link.kernelId,
			kernelName: link.kernelName,
			hostname: attached.hostname,
			cwd: attached.cwd,
		};
		return link;
	}

	/** Runs host code in the kernel without history or broadcast; resolves with its result. */
	private async runSilently(kernel: KernelLink, code: string, kind: string) {
		const run = new CellRun(kernel, code, {
			silent: true,
			outputDir: () => this.outputDirectory(),
			kernelOutputDir: this.kernelOutputDir,
			memoryOutputLimit: this.options.memoryOutputLimit ?? DEFAULTS.memoryOutputLimit,
			name: this.nextOutputName(kind),
			idleGraceMs: DEFAULTS.idleGraceMs,
			stopReason: () => this.stopping,
		});
		await run.start();
		return run.result;
	}

	/** How long Python waits for a host reply (a little longer than the host's own limit). */
	private hostRequestEnv(): Record<string, string> {
		return {
			PRIME_KERNEL_HOST_REQUEST_TIMEOUT_S: String(
				this.hostRequestTimeoutMs > 0 ? (this.hostRequestTimeoutMs + PYTHON_WAIT_MARGIN_MS) / 1000 : 0,
			),
		};
	}

	/** Setup problems (no interpreter, no ipykernel) become KernelSetupError with the fix. */
	private explainStartFailure(error: unknown): unknown {
		if (!(error instanceof KernelStartError)) return error;
		if (
			/No module named '?(ipykernel|IPython|prime_kernel|zmq)|Cannot run the kernel interpreter/.test(error.message)
		) {
			return new KernelSetupError(`Cannot start the kernel with ${this.python}: ${error.message}\n${SETUP_HINT}`);
		}
		return error;
	}

	/** Answers a `host.request` comm with a comm_msg on control (shell is busy with the awaiting cell). */
	private answerHostRequest(kernel: KernelLink, message: JupyterMessage): void {
		const content = message.content as { comm_id?: unknown; target_name?: unknown; data?: unknown };
		if (content.target_name !== HOST_REQUEST_TARGET || typeof content.comm_id !== "string") return;
		const commId = content.comm_id;
		void this.requests.answer(content.data).then(async (reply) => {
			// A notification (`notify_host`) waits for nothing.
			if (!kernel.alive || commId.startsWith(NOTIFY_COMM_PREFIX)) return;
			const header = kernel.header("comm_msg");
			try {
				await kernel.send("control", header, { comm_id: commId, data: reply }, message.header);
			} catch (error) {
				// A reply that cannot be encoded (not JSON) still owes Python an answer.
				const text = error instanceof Error ? error.message : String(error);
				await kernel
					.send(
						"control",
						kernel.header("comm_msg"),
						{ comm_id: commId, data: { status: "error", error: `host reply could not be sent: ${text}` } },
						message.header,
					)
					.catch(() => {});
			}
		});
	}

	private async stopProcess(reason: "shutdown" | "restart"): Promise<void> {
		const current = this.current;
		if (!current?.alive) return;
		this.stopping = reason;
		if (reason === "shutdown" || this.options.jupyterServer) await current.stop(DEFAULTS.shutdownGraceMs);
		current.kill();
		await current.exited;
	}
}

function describeStatus(status: string, link: KernelLink): string {
	return link.exit ? `the kernel ${describeExit(link.exit)}` : status;
}

function describeValue(value: unknown): string {
	if (value === null || value === undefined) return String(value);
	if (Array.isArray(value)) return "an array";
	return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
