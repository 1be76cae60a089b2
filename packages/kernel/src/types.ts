/**
 * Public contracts of the kernel package. The package knows nothing about agents: it starts a real
 * IPython kernel, runs cells one at a time, and answers host requests coming from Python code.
 */

/** Visible output per stream is capped at this many characters; the complete output is kept elsewhere. */
export const VISIBLE_OUTPUT_CAP = 65_536;
/** The exact line appended to a stream whose visible part was capped. */
export const TRUNCATION_MARKER = `[... output truncated at ${VISIBLE_OUTPUT_CAP} chars ...]`;

/**
 * A Jupyter Server (or Enterprise Gateway: the same kernels API) that runs the kernel instead of a
 * local process. The kernel is created with `POST /api/kernels`, driven over its
 * `/api/kernels/<id>/channels` WebSocket, and deleted through the API when it is shut down.
 */
export interface JupyterServerOptions {
	/** The server's base URL, e.g. `http://gpu-box:8888` or `https://host/user/me/` (its base path kept). */
	url: string;
	/** The server's token. Sent in the Authorization header only; never printed, logged or stored. */
	token?: string;
	/** The kernelspec to start. Default `python3`. */
	kernelName?: string;
	/** The kernel's working folder on the server, relative to the server's root (Jupyter's `path`). */
	cwd?: string;
	/** The kernel ends itself after this long without the host's heartbeat. Default 60 s. */
	hostGoneAfterMs?: number;
}

/** Where a kernel runs; what a host tells its model about the machine its code runs on. */
export type KernelLocation =
	| { kind: "local"; hostname: string; cwd: string }
	| {
			kind: "jupyter-server";
			/** The server URL (never with its token). */
			url: string;
			/** The server's id of the kernel. */
			kernelId: string;
			kernelName: string;
			/** The machine the kernel process runs on (`socket.gethostname()` there). */
			hostname: string;
			/** The kernel's working folder on that machine (`os.getcwd()` there). */
			cwd: string;
	  };

export interface KernelStartOptions {
	/**
	 * Run the kernel on this Jupyter Server instead of as a local process. `python`, `baseEnv`,
	 * `pythonPath`'s folders are sent to it (see `remote/`); `cwd` is the server-side `cwd` here.
	 */
	jupyterServer?: JupyterServerOptions;
	/** Python interpreter with ipykernel. Default: `PRIME_AGENT_KERNEL_PYTHON`, else the setup venv. */
	python?: string;
	/** Working directory of the kernel process. Default: `process.cwd()`. */
	cwd?: string;
	/**
	 * The environment the kernel process starts from. Default: `process.env`. A host that keeps
	 * some of its own variables (keys) from the code the kernel runs passes the rest here.
	 */
	baseEnv?: Record<string, string>;
	/** Extra environment for the kernel process (set over `baseEnv`). */
	env?: Record<string, string>;
	/** Extra directories put first on the kernel's `PYTHONPATH` (e.g. the agent's runtime package). */
	pythonPath?: string[];
	/**
	 * Where complete-output files of cells are written (created 0700 if missing). Default: a private
	 * temp directory that `shutdown()` removes; pass a directory to keep the files longer.
	 */
	outputDir?: string;
	/** Bytes of complete output kept in memory per cell before spilling to a file. Default 1 MiB. */
	memoryOutputLimit?: number;
	/** Python run silently once the kernel is ready (and again after each restart). */
	startupCode?: string;
	/** Give up waiting for readiness after this long. Default 30 s. */
	readyTimeoutMs?: number;
	/**
	 * After an interrupt, how long the running cell may take to end before it is reported as still
	 * busy (`stillBusy` / `stillBusyAfterInterrupt`). Default 5 s.
	 */
	stillBusyAfterMs?: number;
	/**
	 * How long a host-request handler may take before Python gets an error reply saying so.
	 * Default 10 minutes; 0 for no limit. Python's own wait (`host_request(..., timeout=)`)
	 * defaults to this plus 30 s, so a host that stops answering altogether raises
	 * `HostRequestTimeout` there instead of hanging the cell.
	 */
	hostRequestTimeoutMs?: number;
}

export interface StreamChunk {
	name: "stdout" | "stderr";
	text: string;
}

export interface ExecuteOptions {
	/** Called for every stream chunk as it arrives (uncapped). */
	onStream?: (chunk: StreamChunk) => void;
	/** Aborting interrupts the cell through the control channel; the kernel keeps its state. */
	signal?: AbortSignal;
	/** Run without history and without broadcasting (for host bookkeeping cells). */
	silent?: boolean;
}

export interface CellError {
	ename: string;
	evalue: string;
	traceback: string[];
}

export interface DisplayData {
	data: Record<string, unknown>;
	metadata: Record<string, unknown>;
	/**
	 * Set when the display was over VISIBLE_OUTPUT_CAP characters of data: the kernel sent its
	 * `text/plain` cut at that cap (ending with TRUNCATION_MARKER) and saved each representation
	 * that did not fit to a file of its own; `data["text/plain"]` ends with one line per entry
	 * saying its type, size and path (or why it could not be saved).
	 */
	saved?: SavedRepresentation[];
	/**
	 * Set when the cell's displays together outgrew `memoryOutputLimit`: the file holds this
	 * display as JSON, and `data` keeps only its `text/plain`.
	 */
	fullDataPath?: string;
}

/** One representation of a display too large to send, saved by the kernel to a file of its own. */
export interface SavedRepresentation {
	/** Its MIME type, e.g. `image/png`. */
	mimeType: string;
	/** Characters it took in the display (base64 text for an image). */
	chars: number;
	/**
	 * The file (0600, in the output folder): the image itself for base64 image types (png, jpeg,
	 * gif, webp, pdf), the text for text types, JSON otherwise. Absent when it could not be written.
	 */
	path?: string;
	/** The file's size in bytes. */
	bytes?: number;
	/** Why it could not be saved (`ENOSPC: No space left on device, '<path>'`); it is then lost. */
	error?: string;
}

/**
 * The outcome of one cell.
 * - `ok`: ran to completion. `error`: raised (see `error`). `aborted`: interrupted (by the
 *   `signal` or `interrupt()`) or never run because the signal was aborted before its turn.
 * - `died`: the kernel process exited mid-cell; `error` explains it. Nothing restarts the kernel
 *   by itself: later `execute` calls reject until the caller runs `restart()`.
 */
export interface CellResult {
	status: "ok" | "error" | "aborted" | "died";
	/** Visible stdout, capped at VISIBLE_OUTPUT_CAP chars and then ending with TRUNCATION_MARKER. */
	stdout: string;
	/** Visible stderr, capped the same way. */
	stderr: string;
	/** `text/plain` of the execute result, if any. */
	result?: string;
	displays: DisplayData[];
	error?: CellError;
	/**
	 * Which visible parts were cut (`result`, the execution result, is capped the same way; `error`:
	 * its `evalue` or traceback was cut, see `capError`).
	 */
	truncated: { stdout: boolean; stderr: boolean; result?: boolean; error?: boolean };
	/**
	 * Path of a file holding the complete output (every byte of stdout, stderr, result and
	 * traceback, in the layout of `formatCellOutput`), written once when the cell completed and
	 * never changed afterwards. Present whenever a visible part was truncated or the output
	 * outgrew `memoryOutputLimit`; absent for small outputs.
	 */
	fullOutputPath?: string;
	/** Size in bytes of the complete output. */
	fullOutputBytes: number;
	durationMs: number;
	executionCount?: number;
	/**
	 * Characters of stream output the kernel published for this cell that never reached the host
	 * (absent when none were lost). The visible stderr and the complete-output file end with a line
	 * saying so.
	 */
	lostOutputChars?: number;
	/** After an interrupt the kernel stayed busy: the caller may wait, or kill and restart. */
	stillBusyAfterInterrupt?: boolean;
}

/** A request made from Python with `await host_request(type, payload)`. */
export interface HostRequest {
	type: string;
	payload: Record<string, unknown>;
}

/**
 * Answers one request type. Resolve with the reply's fields (sent as `{status:"ok", ...fields}`;
 * `status` is always set by the host, a non-object value is sent as `{status:"ok", value}`);
 * throw to send `{status:"error", error: message}`. Never leaves the Python side hanging.
 */
export type HostRequestHandler = (payload: Record<string, unknown>) => unknown | Promise<unknown>;
