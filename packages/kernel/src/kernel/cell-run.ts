import { CellOutput, cutTextOf, savedOf } from "../output/index.js";
import { OUTPUT_STAMP_METADATA_KEY, PUBLISHED_METADATA_KEY } from "../process/index.js";
import type { CellError, CellResult, ExecuteOptions } from "../types.js";
import type { JupyterMessage } from "../wire/index.js";
import { describeExit, type KernelExit } from "./errors.js";
import type { KernelLink } from "./kernel-link.js";

/**
 * Whether an error is what the interrupt raised: KeyboardInterrupt in running code, CancelledError
 * in a cell that was awaiting, or a subprocess the interrupt ended (see `INTERRUPTED_SUBPROCESS`).
 * Any other error after an interrupt is the cell's own and stays an `error`.
 */
export function isInterruptError(reply: Record<string, unknown>): boolean {
	const ename = String(reply.ename);
	if (ename === "KeyboardInterrupt" || ename === "CancelledError") return true;
	return ename === "CalledProcessError" && INTERRUPTED_SUBPROCESS.test(String(reply.evalue));
}

/**
 * How CalledProcessError states a subprocess an interrupt ended. `%%bash` raises "... died with
 * <Signals.SIGINT: 2>"; when the script traps SIGINT it exits 130, and when IPython escalates it
 * dies of SIGTERM or SIGKILL. The interrupt reaches the script with the kernel's process group, so
 * the script can exit before IPython signals it; IPython's `send_signal` then reaps it first and
 * asyncio, finding its child gone, reports exit status 255 (a lost status, seen on a loaded machine).
 */
const INTERRUPTED_SUBPROCESS = /<Signals\.SIG(?:INT|TERM|KILL): \d+>|exit status (?:130|255)\b/;

export interface CellRunOptions extends ExecuteOptions {
	/** Where this cell's output files go; called only when one is needed. */
	outputDir: () => string;
	memoryOutputLimit: number;
	/** Unique base name for this cell's output files. */
	name: string;
	/** After the execute_reply, how long to wait for iopub's idle before completing anyway. */
	idleGraceMs: number;
	/**
	 * The kernel's own output folder when it runs on another machine (a kernel on a Jupyter
	 * Server): the files it saves there are named in the complete output, not copied.
	 */
	kernelOutputDir?: string;
	/** Why the host is stopping the kernel, if it is (so a cell it ends says so, not "it died"). */
	stopReason: () => StopReason | undefined;
	/** The kernel runs on a Jupyter Server, whose iopub rate limits may drop its output. */
	onServer?: boolean;
}

/** Why the host stopped a kernel process: `shutdown()`, `restart()` or `kill()`. */
export type StopReason = "shutdown" | "restart" | "kill";

/**
 * One execute_request from send to completion. It completes when BOTH its execute_reply and its
 * iopub `status: idle` have arrived (so no output is missed), or when the kernel exits.
 *
 * `result` may settle before `settled` does: a cell still busy after an interrupt is reported at
 * once (`reportStillBusy`), while `settled` waits for the kernel to really finish or die, so the
 * next cell is never sent to a busy kernel.
 */
export class CellRun {
	readonly result: Promise<CellResult>;
	readonly settled: Promise<void>;
	/** Set when an interrupt was sent during this cell: its KeyboardInterrupt makes it `aborted`. */
	interrupted = false;

	private readonly output: CellOutput;
	private readonly started = Date.now();
	private resolveResult!: (result: CellResult) => void;
	private resolveSettled!: () => void;
	private reported = false;
	private done = false;
	private reply?: Record<string, unknown>;
	private replyMetadata: Record<string, unknown> = {};
	/** Lines saying which of this cell's messages arrived but could not be read. */
	private readonly unreadable: string[] = [];
	/** Stream characters received for this cell, to compare with what the kernel says it published. */
	private streamCharsReceived = 0;
	/** The server's "IOPub ... rate exceeded" notices shown for this cell (each once). */
	private readonly serverNotices = new Set<string>();
	private idle = false;
	/** Whether any message of this cell arrived (its request reached the kernel). */
	private seen = false;
	private idleTimer?: NodeJS.Timeout;
	private readonly stops: Array<() => void> = [];

	constructor(
		private readonly kernel: KernelLink,
		private readonly code: string,
		private readonly options: CellRunOptions,
	) {
		this.output = new CellOutput({
			memoryLimit: options.memoryOutputLimit,
			dir: options.outputDir,
			name: options.name,
		});
		this.result = new Promise((resolve) => {
			this.resolveResult = resolve;
		});
		this.settled = new Promise((resolve) => {
			this.resolveSettled = resolve;
		});
	}

	get finished(): boolean {
		return this.done;
	}

	/** Sends the cell. Never throws: a kernel that is gone ends the cell as `died`. */
	async start(): Promise<void> {
		this.stops.push(this.kernel.onExit((exit) => this.onExit(exit)));
		this.stops.push(this.kernel.onReconnect(() => this.afterReconnect()));
		if (this.done) return;
		const silent = this.options.silent ?? false;
		const header = this.kernel.header("execute_request");
		this.stops.push(this.kernel.watchIopub(header.msg_id, (message) => this.onIopub(message)));
		this.stops.push(this.kernel.watchReply(header.msg_id, (message) => this.onReply(message)));
		try {
			await this.kernel.send("shell", header, {
				code: this.code,
				silent,
				store_history: !silent,
				user_expressions: {},
				allow_stdin: false,
				stop_on_error: false,
			});
		} catch {
			this.onExit(this.kernel.exit ?? { code: null, signal: null });
		}
	}

	/**
	 * Reports the cell now as aborted and still busy (the caller may wait, or kill and restart).
	 * Output arriving later is not collected; `settled` still waits for the kernel to finish.
	 */
	reportStillBusy(): void {
		if (this.reported) return;
		this.report({ ...this.collect("aborted"), stillBusyAfterInterrupt: true });
	}

	private onIopub(message: JupyterMessage): void {
		this.seen = true;
		if (this.reply && !this.done) this.armIdleGrace();
		const content = message.content as Record<string, unknown>;
		const type = message.header.msg_type;
		if (type === "status") {
			if (content.execution_state === "idle") {
				this.idle = true;
				this.maybeComplete();
			}
			return;
		}
		// Only what the kernel published counts (it stamps each of its messages): a note a Jupyter
		// Server adds to the cell ("IOPub data rate exceeded") is not the kernel's output.
		const stamped = Boolean(message.metadata?.[OUTPUT_STAMP_METADATA_KEY]);
		if (type === "stream" && typeof content.text === "string") {
			if (stamped) this.streamCharsReceived += content.text.length;
			// The server repeats its notice each time its limiter trips again (every acknowledgement
			// of output resets it): the cell shows it once, and its lost-output line says the rest.
			else if (this.options.onServer && SERVER_RATE_NOTICE.test(content.text)) {
				if (this.serverNotices.has(content.text)) return;
				this.serverNotices.add(content.text);
			}
		}
		if (this.reported) return;
		if (message.unreadable) {
			this.unreadable.push(unreadableNote(type, message.unreadable));
			return;
		}
		if (type === "stream") {
			const name = content.name === "stderr" ? "stderr" : "stdout";
			const text = typeof content.text === "string" ? content.text : "";
			this.output.append(name, text);
			this.options.onStream?.({ name, text });
		} else if (type === "execute_result") {
			const data = (content.data ?? {}) as Record<string, unknown>;
			if (typeof data["text/plain"] === "string") this.output.setResult(data["text/plain"], this.cutText(content));
		} else if (type === "display_data" || type === "update_display_data") {
			const saved = savedOf(content);
			this.output.addDisplay({
				data: (content.data ?? {}) as Record<string, unknown>,
				metadata: (content.metadata ?? {}) as Record<string, unknown>,
				...(saved ? { saved } : {}),
			});
		} else if (type === "error") {
			this.output.setError(toCellError(content), this.cutText(content));
		}
	}

	/** The whole text of an error or result the kernel cut, in the output folder. */
	private cutText(content: Record<string, unknown>) {
		return cutTextOf(content, this.options.outputDir, this.options.kernelOutputDir);
	}

	private onReply(message: JupyterMessage): void {
		if (message.header.msg_type !== "execute_reply") return;
		this.seen = true;
		this.reply = message.content as Record<string, unknown>;
		this.replyMetadata = message.metadata ?? {};
		this.maybeComplete();
		if (!this.done) this.armIdleGrace();
	}

	/**
	 * The link dropped and came back (a kernel on a server): the cell's request, its reply or its
	 * last messages may have been lost on the way. Shell answers in order, so once a kernel_info
	 * sent now is answered the cell has ended on the kernel: a cell still without its reply then
	 * ends here, with what arrived and a line saying what may be missing, instead of waiting forever.
	 */
	private afterReconnect(): void {
		if (this.done) return;
		const header = this.kernel.header("kernel_info_request");
		const stop = this.kernel.watchReply(header.msg_id, () => {
			stop();
			this.onShellCaughtUp();
		});
		this.stops.push(stop);
		this.kernel.send("shell", header, {}).catch(() => {});
	}

	private onShellCaughtUp(): void {
		if (this.done) return;
		if (this.reply) {
			this.complete();
			return;
		}
		const evalue = this.seen
			? "The connection to the kernel's server dropped while this cell ran: its result and the end of its output were lost. The kernel and its variables are intact."
			: "The connection to the kernel's server dropped as this cell was sent: it may not have run, and any output it printed was lost. The kernel and its variables are intact; check before running it again.";
		this.end(() => {
			this.output.setError({ ename: "ConnectionDropped", evalue, traceback: [] });
			return this.collect("error");
		});
	}

	/**
	 * iopub can drop messages under extreme load: never wait forever for an idle that was lost.
	 * The clock restarts with every iopub message, so a host still reading a backlog of output
	 * does not complete the cell early.
	 */
	private armIdleGrace(): void {
		clearTimeout(this.idleTimer);
		this.idleTimer = setTimeout(() => this.complete(), this.options.idleGraceMs);
	}

	private maybeComplete(): void {
		if (this.reply && this.idle) this.complete();
	}

	private complete(): void {
		if (this.done) return;
		const reply = this.reply ?? {};
		let status: CellResult["status"] = "ok";
		if (reply.status === "error") status = this.interrupted && isInterruptError(reply) ? "aborted" : "error";
		else if (reply.status === "aborted") status = "aborted";
		const published = this.replyMetadata[PUBLISHED_METADATA_KEY];
		const lost = typeof published === "number" ? Math.max(0, published - this.streamCharsReceived) : 0;
		this.end(() => {
			if (reply.status === "error") this.output.setErrorIfMissing(toCellError(reply), this.cutText(reply));
			const result = this.collect(status, lost);
			if (typeof reply.execution_count === "number") result.executionCount = reply.execution_count;
			return result;
		});
	}

	private onExit(exit: KernelExit): void {
		if (this.done) return;
		this.end(() => {
			this.output.setError({
				ename: "KernelDied",
				evalue: diedMessage(exit, this.options.stopReason()),
				traceback: [],
			});
			return this.collect("died");
		});
	}

	/**
	 * Everything collected so far, as a result (closes the output: call once). `lostChars` of output
	 * the kernel sent never arrived: the visible stderr and the complete-output file both say so. A
	 * complete output that could not be written to disk makes the cell an error naming the path.
	 */
	private collect(status: CellResult["status"], lostChars = 0): CellResult {
		const lost = lostChars > 0 ? [lostOutputNote(lostChars, this.serverNotices.size > 0)] : [];
		const notes = [...this.unreadable, ...lost];
		const collected = this.output.finish(notes.map((note) => `${note}\n`));
		if (collected.fileError) notes.push(`[${collected.fileError}]`);
		const result: CellResult = {
			status,
			stdout: collected.stdout,
			stderr: appendLines(collected.stderr, notes),
			result: collected.result,
			displays: collected.displays,
			error: collected.error,
			truncated: collected.truncated,
			fullOutputPath: collected.fullOutputPath,
			fullOutputBytes: collected.fullOutputBytes,
			durationMs: Date.now() - this.started,
		};
		if (lostChars > 0) result.lostOutputChars = lostChars;
		if (collected.fileError && status === "ok") {
			result.status = "error";
			result.error = { ename: "OutputFileError", evalue: collected.fileError, traceback: [] };
		}
		return result;
	}

	/** Finishes the cell; `build` makes the result unless one was already reported. Always settles. */
	private end(build: () => CellResult): void {
		this.done = true;
		clearTimeout(this.idleTimer);
		for (const stop of this.stops) stop();
		if (!this.reported) {
			try {
				this.report(build());
			} catch (error) {
				// A bug here must not wedge the queue: the cell still ends, with the reason.
				this.report(failedResult(error, Date.now() - this.started));
			}
		}
		this.resolveSettled();
	}

	private report(result: CellResult): void {
		this.reported = true;
		this.resolveResult(result);
	}
}

/**
 * What a cell ended by the kernel's exit says: what happened. Not what to do: a host shows this to
 * people and models who cannot call the host's `restart()` (the agent restarts on the next cell and
 * says so); a host that calls `execute` again is told by `KernelNotRunningError`.
 */
function diedMessage(exit: KernelExit, reason: StopReason | undefined): string {
	if (reason === "shutdown") return "The kernel was shut down while this cell was running; its variables are gone.";
	if (reason === "restart") {
		return "The kernel was restarted while this cell was running; its variables are gone (the new kernel starts empty).";
	}
	// A kernel on a server has a reason instead of an exit code (see KernelExit).
	return `The kernel${exit.reason ? "" : " process"} ${describeExit(exit)} while this cell was running; all kernel variables are gone.`;
}

/**
 * How a Jupyter Server's note begins when its iopub rate limits drop a cell's output (jupyter-server
 * 1 and 2, and the classic notebook server, word it so); it names the limit's old `ServerApp.` name.
 */
const SERVER_RATE_NOTICE = /^IOPub (?:data|message) rate exceeded\./;

/**
 * The line that tells a reader some of the cell's output never arrived; `byServerLimit` when the
 * server said its iopub rate limits dropped output, with the settings that stop it (jupyter-server 2
 * ignores the `ServerApp.` names its own note gives).
 */
export function lostOutputNote(chars: number, byServerLimit = false): string {
	if (byServerLimit) {
		return `[... ${chars} characters of output were dropped by the Jupyter Server's iopub rate limits and never reached the host: this output is incomplete. To keep all output, start the server with --ZMQChannelsWebsocketConnection.iopub_data_rate_limit=0 --ZMQChannelsWebsocketConnection.iopub_msg_rate_limit=0 (on jupyter-server 1: --ServerApp.iopub_data_rate_limit=0 --ServerApp.iopub_msg_rate_limit=0), or print less ...]`;
	}
	return `[... ${chars} characters of output were sent by the kernel but never reached the host: this output is incomplete ...]`;
}

/** The line that tells a reader one of the cell's messages arrived but could not be read. */
function unreadableNote(type: string, why: string): string {
	return `[... a ${type} message of this cell could not be read (${why}) and is missing from this output ...]`;
}

function appendLines(text: string, lines: string[]): string {
	if (lines.length === 0) return text;
	return `${text}${text.length > 0 && !text.endsWith("\n") ? "\n" : ""}${lines.join("\n")}\n`;
}

function failedResult(error: unknown, durationMs: number): CellResult {
	const reason = error instanceof Error ? error.message : String(error);
	return {
		status: "error",
		stdout: "",
		stderr: "",
		displays: [],
		error: { ename: "HostError", evalue: `The host could not collect this cell's output: ${reason}`, traceback: [] },
		truncated: { stdout: false, stderr: false },
		fullOutputBytes: 0,
		durationMs,
	};
}

function toCellError(content: Record<string, unknown>): CellError {
	return {
		ename: typeof content.ename === "string" ? content.ename : "Error",
		evalue: typeof content.evalue === "string" ? content.evalue : "",
		traceback: Array.isArray(content.traceback) ? content.traceback.map(String) : [],
	};
}
