import type { ChildProcess } from "node:child_process";
import { delimiter, join } from "node:path";
import { spawnGuardedGroup } from "./group-guard.js";
import { PYTHON_PACKAGE_DIR } from "./python-package.js";

export interface KernelProcessOptions {
	python: string;
	connectionFile: string;
	cwd?: string;
	/** What the process starts from instead of `process.env` (see `KernelStartOptions.baseEnv`). */
	baseEnv?: Record<string, string>;
	env?: Record<string, string>;
	pythonPath?: string[];
}

/**
 * Characters of stream output the kernel may send ahead of what the host has read (flow control,
 * see `python/prime_kernel/output_chunks.py`); this bounds the host's receive queue.
 */
export const OUTPUT_WINDOW_CHARS = 4 * 1024 * 1024;
/** The host acknowledges what it has read at least this often (characters, or stream messages). */
export const OUTPUT_ACK_EVERY = { chars: 1024 * 1024, messages: 100 };
/** Metadata key of the kernel's running totals `{chars, messages}` stamped on each stream message. */
export const OUTPUT_STAMP_METADATA_KEY = "prime_published";
/** Message type of the kernel's probe (content: its totals), acknowledged as soon as it is read. */
export const OUTPUT_PROBE_MSG_TYPE = "prime_output_probe";
/** Comm id of those acknowledgements on the control channel. */
export const OUTPUT_CREDIT_COMM_ID = "prime.output.credit";
/** Key of a cell's published stream characters (UTF-16 units) in its `execute_reply`'s metadata. */
export const PUBLISHED_METADATA_KEY = "prime_stream_published";

/** The kernel's own flags, after `-f <connection file>` (also in a kernelspec's argv). */
export const KERNEL_FLAGS = [
	// Plain tracebacks: colour codes would only cost the reader tokens.
	"--InteractiveShell.colors=nocolor",
	"--HistoryManager.enabled=False",
] as const;

/** How many bytes of the kernel's own stderr are kept to explain a failed start or a crash. */
const STDERR_TAIL_BYTES = 8192;

export interface KernelProcess {
	child: ChildProcess;
	/** Last bytes the process wrote to its stderr outside any cell (import errors, crashes). */
	stderrTail(): string;
	/** Set when the interpreter could not be run at all (missing, not executable). */
	spawnError?: NodeJS.ErrnoException;
	/** Resolves when the process has exited (and what was left of its process group was killed). */
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The kernel's launch script. Run as a script, not `python -m prime_kernel`: `-m` would put the
 * kernel's working directory (a repository) first on sys.path, and its `zmq.py` would run as the
 * kernel starts. The project folder is added for cells only after startup, last on sys.path
 * (`python/prime_kernel/project_path.py`).
 */
const LAUNCH_SCRIPT = join(PYTHON_PACKAGE_DIR, "prime_kernel_launch.py");

/**
 * Starts `python prime_kernel_launch.py -f <connection file>`: a stock ipykernel that exits when this
 * host process is gone and accepts host replies on control. The kernel leads its own process
 * group, so terminal signals meant for the host do not reach it and a kill takes its children too.
 * The group dies with the kernel and with the host (`spawnGuardedGroup`); besides, the kernel's
 * own guard (`parent_watch.py`) removes the connection file when the host is gone.
 */
export function spawnKernelProcess(options: KernelProcessOptions): KernelProcess {
	const env: Record<string, string | undefined> = { ...(options.baseEnv ?? process.env), ...options.env };
	// An empty entry of the user's PYTHONPATH (`export PYTHONPATH=$PYTHONPATH:/x` with none set before)
	// means the working directory, ahead of everything installed: dropped, like the `-m` we avoid.
	const userPath = (env.PYTHONPATH ?? "").split(delimiter);
	const pythonPath = [PYTHON_PACKAGE_DIR, ...(options.pythonPath ?? []), ...userPath].filter(Boolean);
	env.PYTHONPATH = pythonPath.join(delimiter);
	env.PRIME_KERNEL_HOST_PID = String(process.pid);
	env.PYTHONUNBUFFERED = "1";
	env.PRIME_KERNEL_OUTPUT_WINDOW = String(OUTPUT_WINDOW_CHARS);
	// ipykernel's own parent poller watches getppid(), which a subreaper defeats; ours watches the pid.
	delete env.JPY_PARENT_PID;
	const child = spawnGuardedGroup(options.python, [LAUNCH_SCRIPT, "-f", options.connectionFile, ...KERNEL_FLAGS], {
		cwd: options.cwd,
		env,
		stdio: ["ignore", "pipe", "pipe"],
	});
	let tail = "";
	const keep = (chunk: Buffer) => {
		tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
	};
	child.stdout?.on("data", keep);
	child.stderr?.on("data", keep);
	const kernelProcess: KernelProcess = {
		child,
		stderrTail: () => tail,
		exited: new Promise((resolve) => {
			child.once("exit", (code, signal) => resolve({ code, signal }));
			child.once("error", (error: NodeJS.ErrnoException) => {
				kernelProcess.spawnError = error;
				resolve({ code: null, signal: null });
			});
		}),
	};
	return kernelProcess;
}

/** Sends `signal` to the kernel's whole process group (falls back to the process alone). */
export function signalKernel(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			// Already gone.
		}
	}
}
