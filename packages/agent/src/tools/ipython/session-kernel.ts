import { isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
	type CellResult,
	type HostRequestHandler,
	type JupyterServerOptions,
	Kernel,
	type KernelLocation,
	KernelSetupError,
	KernelStartError,
	restoreKernelState,
	type StreamChunk,
} from "prime-agent-kernel";
import { ensurePrivateDir } from "../../home/index.js";
import {
	INJECTED_HANDLES,
	RESUMED_FROM,
	restartRestoredFrom,
	restoreNotice,
	type StateSaveOutcome,
	StateSaver,
	type StateSeal,
	type StateSource,
} from "../../kernel-state/index.js";

/** The `prime_agent_runtime` package directory, put first on the kernel's PYTHONPATH. */
export const RUNTIME_PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));

const STARTUP_CODE = "import prime_agent_runtime as _prime_runtime\n_prime_runtime.install()\ndel _prime_runtime\n";

/** A file changed by `await edit(...)` during a cell. */
export interface FileDiff {
	path: string;
	diff: string;
	added: number;
	removed: number;
}

/**
 * Progress of the kernel for the user interface. `busy`: a cell that ignored the interrupt was left
 * running (the user chose to wait for it), so the kernel stays busy after its tool call ended and
 * the next cell waits; `idle`: that cell has ended.
 */
export type KernelStatus =
	| { phase: "starting" }
	| { phase: "ready"; durationMs: number; pid?: number }
	| { phase: "restarting"; reason: string }
	| { phase: "failed"; message: string }
	| { phase: "busy"; reason: string }
	| { phase: "idle" };

/**
 * Told of each kernel a session starts (once it is ready) and of each that ended (shut down, or
 * killed after it died or stayed busy), with where it ran. `ended` is awaited by `dispose()` and
 * never throws.
 */
export interface KernelLifecycle {
	started(location: KernelLocation): void;
	ended(location: KernelLocation): Promise<void>;
}

export interface SessionKernelOptions {
	/** Working directory the kernel starts in (a local kernel's; see `jupyterServer`). */
	cwd: string;
	/**
	 * Run the kernels on this Jupyter Server instead of as local processes (their working folder is
	 * its `cwd`, on the server's machine; `python` is not used). Its token is never stored or logged.
	 */
	jupyterServer?: JupyterServerOptions;
	/** See `KernelLifecycle`: the session records its kernels on a server with it. */
	lifecycle?: KernelLifecycle;
	/** Folder for complete cell outputs (inside the session's artifact folder). */
	outputDir: string;
	/** Python interpreter; default: the kernel package's resolution (env, then setup venv). */
	python?: string;
	/**
	 * The environment the kernel (and everything the model's code starts from it: `%%bash`, `!cmd`,
	 * subprocesses) begins with, instead of this process's: the host's without its keys.
	 */
	baseEnv?: Record<string, string>;
	/** Set over `baseEnv`. */
	env?: Record<string, string>;
	/** Progress of start and restart, for the user interface. */
	onStatus?: (status: KernelStatus) => void;
	/**
	 * Variables across sessions: after successful cells (debounced) and at `dispose()` the namespace
	 * is saved to `dir`, kept for the session entry `entryOf` names for the cell (see `StateSaver`);
	 * the first kernel started loads `restoreFrom` before the runtime injects its handles (so the
	 * live handles win), and a kernel started after a restart loads the last snapshot. Without it
	 * nothing is saved. `seal` marks each save as this agent home's (a restore loads only sealed
	 * snapshots, see `planStateRestore`).
	 */
	state?: {
		dir: string;
		restoreFrom?: StateSource;
		seal?: StateSeal;
		onSaved?: (outcome: StateSaveOutcome) => void;
		entryOf?: (cellId: string) => string | undefined;
	};
}

/**
 * What to do when a cell keeps running after an interrupt: `wait` keeps the kernel and its state
 * (the next cell runs once this one ends), `restart` kills it and starts a fresh one.
 */
export type StillBusyChoice = "wait" | "restart";

export interface CellRun {
	cell: CellResult;
	diffs: FileDiff[];
	/**
	 * Files under the kernel's working directory the cell changed, however it wrote them (Python,
	 * `%%bash`, a program it ran): relative to the session's directory when inside it, else absolute.
	 */
	writtenFiles: string[];
	/**
	 * Set once on the first cell in a new kernel that the model must hear about: a restart (its
	 * variables are gone) or a restore from the saved state (which names came back and which did not).
	 */
	resetNotice?: string;
	/** The cell ignored the interrupt and the user chose to let it run on. */
	stillRunning?: boolean;
	/** The cell ignored the interrupt and its kernel was killed: the next cell runs in a new one. */
	kernelRestarted?: boolean;
}

/**
 * The kernel of one session: started on first use, restarted after it died or stayed busy after
 * an interrupt (and then the next cell carries a one-time notice), shut down with the session.
 */
export class SessionKernel {
	private kernel: Kernel | undefined;
	private starting: Promise<Kernel> | undefined;
	private pendingNotice: string | undefined;
	private diffs: FileDiff[] = [];
	private written = new Set<string>();
	private cellController: AbortController | undefined;
	private disposed = false;
	private readonly saver: StateSaver | undefined;
	/** Host-request handlers of the session, installed on every kernel it starts. */
	private readonly hostHandlers = new Map<string, HostRequestHandler>();
	/** Unregister functions of those handlers on the current kernel. */
	private installedHandlers = new Map<string, () => void>();
	/** Extra start-up code (from extensions), run after the runtime in every kernel started later. */
	private readonly startupExtras: string[] = [];
	/** Directories extensions put on the kernel's path, after the runtime's. */
	private readonly extraPythonPath: string[] = [];
	/** Names extensions' start-up code defines: never saved, never listed as the model's. */
	private readonly extraNames: string[] = [];
	/** What the next kernel started loads (cleared once it tried), and how its notice names it. */
	private restoreFrom: { source: StateSource; from: string } | undefined;
	/** The snapshot the current kernel was loaded from: a restart before any save gets it back. */
	private loadedFrom: StateSource | undefined;
	/** A restart was noted and its kernel is not started yet. */
	private restartPending = false;
	/** Why the kernel restarted, since `takeRestarts()` last asked. */
	private restarts: string[] = [];
	/**
	 * Asked when a cell keeps running after an interrupt; an interactive mode sets it to ask the
	 * user. Without it the kernel is restarted, so a session can never hang on one cell.
	 */
	onStillBusy: (() => Promise<StillBusyChoice>) | undefined;
	/** See `setupFailure`. */
	private lastSetupFailure: string | undefined;
	/** Settles once the cell left running after an interrupt has ended (see `leaveRunning`). */
	private leftRunning: Promise<void> | undefined;

	constructor(private readonly options: SessionKernelOptions) {
		const state = options.state;
		if (state)
			this.saver = new StateSaver({
				dir: state.dir,
				seal: state.seal,
				onSaved: state.onSaved,
				entryOf: state.entryOf,
				exclude: () => this.injectedNames,
			});
		if (state?.restoreFrom) this.restoreFrom = { source: state.restoreFrom, from: RESUMED_FROM };
		// `edit()` reports each diff; the cell's result carries them.
		this.onHostRequest("file.edit", (payload) => {
			this.diffs.push({
				path: String(payload.path ?? ""),
				diff: String(payload.diff ?? ""),
				added: Number(payload.added ?? 0),
				removed: Number(payload.removed ?? 0),
			});
			return {};
		});
		// The runtime reports the files each cell changed (see `written_files.py`).
		this.onHostRequest("files.written", (payload) => {
			const paths = Array.isArray(payload.paths) ? payload.paths : [];
			// A kernel on a server names files of its own machine: relative to its folder there.
			const cwd = this.location?.cwd ?? this.options.cwd;
			for (const path of paths) if (typeof path === "string") this.written.add(sessionRelative(cwd, path));
			return {};
		});
	}

	/** Names the runtime and the extensions define in every kernel (never saved, never the model's own). */
	get injectedNames(): string[] {
		return [...INJECTED_HANDLES, ...this.extraNames];
	}

	/**
	 * Whether a cell is running right now: the current call's, or one that ignored the interrupt and
	 * was left running (the next cell waits for it).
	 */
	get busy(): boolean {
		return this.cellController !== undefined || this.leftRunning !== undefined;
	}

	/**
	 * Why the last start failed, when the kernel's environment is broken (a KernelSetupError: no
	 * interpreter, no ipykernel); cleared when a start begins. A run stops on it (see AgentSession).
	 */
	get setupFailure(): string | undefined {
		return this.lastSetupFailure;
	}

	get started(): boolean {
		return this.kernel !== undefined;
	}

	/** Where the current kernel runs (`undefined` before the first start). */
	get location(): KernelLocation | undefined {
		return this.kernel ? this.kernel.location : undefined;
	}

	/**
	 * Start the kernel now rather than at the first cell, and say where it runs (a host tells its
	 * model so). Rejects as a start does (`KernelStartError`, `KernelSetupError`).
	 */
	async ready(): Promise<KernelLocation> {
		return (await this.ensureKernel()).location;
	}

	/**
	 * Why the kernel restarted (each time) since the last call, which forgets them: a note about
	 * the kernel (`<ipython_state>`) says so.
	 */
	takeRestarts(): string[] {
		return this.restarts.splice(0);
	}

	/**
	 * Run one cell. `signal` (the run's abort) and `interruptCell()` both interrupt it. `cellId`
	 * (the tool call's id) lets the snapshot after it be kept for the cell's session entry.
	 */
	async run(
		code: string,
		signal?: AbortSignal,
		onStream?: (chunk: StreamChunk) => void,
		cellId?: string,
	): Promise<CellRun> {
		const kernel = await this.ensureKernel();
		const controller = new AbortController();
		const forward = () => controller.abort();
		signal?.addEventListener("abort", forward, { once: true });
		if (signal?.aborted) controller.abort();
		this.cellController = controller;
		try {
			await this.saver?.beforeCell();
			this.diffs = [];
			this.written = new Set();
			const cell = await kernel.execute(code, { signal: controller.signal, onStream });
			this.saver?.cellEnded(kernel, cell.status === "ok", cellId);
			const run: CellRun = { cell, diffs: this.diffs, writtenFiles: [...this.written].sort() };
			if (this.pendingNotice) {
				run.resetNotice = this.pendingNotice;
				this.pendingNotice = undefined;
			}
			if (cell.status === "died") {
				this.markReset(
					`the kernel process exited during the previous cell (${cell.error?.evalue ?? "no reason given"})`,
				);
			} else if (cell.stillBusyAfterInterrupt) {
				const choice = (await this.onStillBusy?.().catch(() => "restart" as const)) ?? "restart";
				if (choice === "wait") {
					run.stillRunning = true;
					this.leaveRunning(kernel);
				} else {
					this.options.onStatus?.({ phase: "restarting", reason: "the cell kept running after an interrupt" });
					this.discard(kernel);
					this.kernel = undefined;
					this.markReset("the previous cell kept running after an interrupt, so the kernel was killed");
					// This cell's own result says so too (the next cell's notice is for a model that skimmed it).
					run.kernelRestarted = true;
				}
			}
			return run;
		} finally {
			signal?.removeEventListener("abort", forward);
			this.cellController = undefined;
		}
	}

	/**
	 * The cell that ignored the interrupt runs on in `kernel`: busy until it ends, which an empty
	 * silent cell queued behind it (cells run in order) tells; a kernel killed meanwhile ends it too.
	 */
	private leaveRunning(kernel: Kernel): void {
		const ended = kernel.execute("", { silent: true }).then(
			() => {},
			() => {},
		);
		this.leftRunning = ended;
		this.options.onStatus?.({ phase: "busy", reason: "the interrupted cell is still running" });
		void ended.then(() => {
			// A later cell left running (this one's successor) is still waited for.
			if (this.leftRunning !== ended) return;
			this.leftRunning = undefined;
			if (this.kernel === kernel && !this.disposed) this.options.onStatus?.({ phase: "idle" });
		});
	}

	/**
	 * Answer a host request type from Python (`await host_request(type, payload)`) on the current
	 * kernel and on every kernel started later (restarts included). Returns an unregister function.
	 */
	onHostRequest(type: string, handler: HostRequestHandler): () => void {
		this.hostHandlers.set(type, handler);
		if (this.kernel) this.installHostHandler(this.kernel, type, handler);
		return () => {
			if (this.hostHandlers.get(type) !== handler) return;
			this.hostHandlers.delete(type);
			this.installedHandlers.get(type)?.();
			this.installedHandlers.delete(type);
		};
	}

	private installHostHandler(kernel: Kernel, type: string, handler: HostRequestHandler): void {
		this.installedHandlers.get(type)?.();
		this.installedHandlers.set(type, kernel.onHostRequest(type, handler));
	}

	/**
	 * Run `code` in every kernel started from now on, after the runtime is installed (so it may use
	 * its names). A failure is reported in the kernel's start-up error, like the runtime's own.
	 * `pythonPath` goes on those kernels' path; `names` are the names the code defines.
	 */
	addStartupCode(code: string, options: { pythonPath?: string[]; names?: string[] } = {}): void {
		this.startupExtras.push(code.endsWith("\n") ? code : `${code}\n`);
		this.extraPythonPath.push(...(options.pythonPath ?? []));
		this.extraNames.push(...(options.names ?? []));
	}

	private get startupCode(): string {
		return STARTUP_CODE + this.startupExtras.join("");
	}

	/** Interrupt the running cell only (the run goes on and the model sees the interruption). */
	interruptCell(): boolean {
		if (!this.cellController) return false;
		this.cellController.abort();
		return true;
	}

	async dispose(): Promise<void> {
		this.disposed = true;
		const kernel = this.kernel ?? (await this.starting?.catch(() => undefined));
		// The last changes are saved before the kernel goes (a cell still running is not waited for).
		if (kernel?.alive && !this.busy) await this.saver?.flush();
		this.kernel = undefined;
		if (!kernel) return;
		await kernel.shutdown().catch(() => kernel.kill());
		await this.ended(kernel);
	}

	/** A kernel is gone (shut down or killed): the lifecycle hears of it, in the background unless awaited. */
	private ended(kernel: Kernel): Promise<void> {
		return this.options.lifecycle?.ended(kernel.location) ?? Promise.resolve();
	}

	/** Kill a kernel that will not be used again. */
	private discard(kernel: Kernel): void {
		kernel.kill();
		void this.ended(kernel);
	}

	/**
	 * The kernel is gone: the next one starts with the last snapshot (taken before the cell that
	 * stopped it; a save never describes the empty kernel in between), and its first cell says so.
	 */
	private markReset(reason: string): void {
		this.saver?.kernelReplaced();
		this.restarts.push(reason);
		this.restartPending = true;
		const last = this.saver?.lastSaved ?? this.loadedFrom;
		if (last) {
			this.restoreFrom = { source: last, from: restartRestoredFrom() };
			this.pendingNotice = `[Kernel restarted: ${reason}.]`;
		} else {
			this.pendingNotice = `[Kernel restarted: ${reason}. Every variable, import and function defined before is gone; define again what you need.]`;
		}
	}

	private async ensureKernel(): Promise<Kernel> {
		if (this.disposed) throw new Error("The session is closed; its kernel cannot run more cells.");
		if (this.kernel?.alive) return this.kernel;
		if (this.kernel && !this.kernel.alive) {
			this.options.onStatus?.({ phase: "restarting", reason: "the kernel process exited" });
			if (!this.restartPending) this.markReset("the kernel process exited between cells");
			const dead = this.kernel;
			this.kernel = undefined;
			this.discard(dead);
		}
		if (!this.starting) {
			this.starting = this.start().finally(() => {
				this.starting = undefined;
			});
		}
		return this.starting;
	}

	private async start(): Promise<Kernel> {
		this.options.onStatus?.({ phase: "starting" });
		this.lastSetupFailure = undefined;
		const began = Date.now();
		try {
			// Complete outputs may hold anything the code printed: keep them private.
			ensurePrivateDir(this.options.outputDir);
			const restoreFrom = this.restoreFrom;
			this.restoreFrom = undefined;
			this.restartPending = false;
			this.loadedFrom = restoreFrom?.source;
			// With a snapshot to restore, the runtime is installed after it, so its live handles win.
			let kernel = await this.launch(restoreFrom ? undefined : this.startupCode);
			if (restoreFrom && !(await this.restoreThenInstall(kernel, restoreFrom.source, restoreFrom.from))) {
				this.discard(kernel);
				this.loadedFrom = undefined;
				kernel = await this.launch(this.startupCode);
			}
			this.installedHandlers = new Map();
			for (const [type, handler] of this.hostHandlers) this.installHostHandler(kernel, type, handler);
			this.kernel = kernel;
			this.options.onStatus?.({ phase: "ready", durationMs: Date.now() - began, pid: kernel.pid });
			return kernel;
		} catch (error) {
			if (error instanceof KernelSetupError) this.lastSetupFailure = error.message;
			this.options.onStatus?.({ phase: "failed", message: (error as Error).message });
			throw error;
		}
	}

	private async launch(startupCode: string | undefined): Promise<Kernel> {
		const server = this.options.jupyterServer;
		const kernel = await Kernel.start({
			// A kernel on a server works in the server's folder, with the server's interpreter.
			...(server ? { jupyterServer: server } : { python: this.options.python, cwd: this.options.cwd }),
			baseEnv: this.options.baseEnv,
			env: this.options.env,
			pythonPath: [RUNTIME_PYTHON_DIR, ...this.extraPythonPath],
			outputDir: this.options.outputDir,
			startupCode,
		});
		this.options.lifecycle?.started(kernel.location);
		return kernel;
	}

	/**
	 * Load the snapshot (a broken one is reported, not thrown), then inject the runtime's handles.
	 * False when the kernel died while loading: the caller then starts an empty one.
	 */
	private async restoreThenInstall(kernel: Kernel, source: StateSource, from: string): Promise<boolean> {
		try {
			const report = await restoreKernelState(kernel, source.dir, source.entry);
			const notice =
				restoreNotice(report, from) ??
				(from === RESUMED_FROM
					? undefined
					: `[The snapshot to restore (${from}) is gone: every variable, import and function defined before is gone; define again what you need.]`);
			if (notice) this.pendingNotice = this.pendingNotice ? `${this.pendingNotice}\n${notice}` : notice;
		} catch (error) {
			const started = kernel.alive ? "some earlier names may be missing" : "the kernel died, so it started again empty";
			this.pendingNotice = `[The saved kernel state could not be restored (${(error as Error).message}); ${started}. Define again what you need.]`;
			if (!kernel.alive) return false;
		}
		const install = await kernel.execute(this.startupCode, { silent: true });
		if (install.status !== "ok") {
			this.discard(kernel);
			const detail = install.error ? `${install.error.ename}: ${install.error.evalue}` : install.status;
			throw new KernelStartError(
				`The agent runtime failed to install in the kernel (${detail}); run \`prime-agent doctor\`.`,
			);
		}
		return true;
	}
}

/** A path inside the session's directory relative to it (as the model names files), any other absolute. */
function sessionRelative(cwd: string, path: string): string {
	const inside = relative(cwd, path);
	return inside && !inside.startsWith("..") && !isAbsolute(inside) ? inside : path;
}

export function cellOutputDir(artifactDir: string): string {
	return join(artifactDir, "outputs");
}
