/**
 * The line selection of large observations on a thread of its own. A scan is two independent
 * passes over the same lines: the outcome scan and the line selection (classification, shapes, kept
 * lines), about half of the time each, and the outcome needs from the selection only the last lines
 * shaped like a failure or an error, at the end. So while the scanning thread reads, archives and
 * scans the outcome, this thread selects from copies of the same chunks. On two cores (shared with
 * the archive's compression) that took a quarter off the wall time of 10 and 100 MB observations,
 * for about a fifth more CPU time (see `THREAD_MIN_BYTES` for smaller ones).
 *
 * One thread per process, started by the second observation large enough to use it (a one-shot
 * command, `prime-context run`, never pays for starting one; that observation is still selected in
 * place: a thread takes tens of milliseconds to start) and kept for the process's life. It costs
 * memory: about 10 MiB idle, and a 100 MB observation peaks about 25 MiB higher than in place (the
 * thread's own heap; capping its young generation saved most of that but cost 3 ms per 1 MB). It
 * never keeps a process alive by itself. A thread that stops is replaced; after `MAX_FAILURES`
 * stops, or when the compiled entry is missing (running from TypeScript sources), every selection
 * runs in place. A failed job never fails the observation: the scan selects again in place
 * (`scanObservation`).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { SelectedLines } from "./selection-pass.js";
import type { FromSelectionThread, ToSelectionThread } from "./selection-worker.js";

/**
 * Observations at least this large (bytes, or characters of a visible text) are selected on the
 * thread. Below it the thread does not pay: at 1 MB it took 5-8% off the p50 but added 14-19% to the
 * p95 (an observation waits for the slower of two threads, and each runs slower while both vCPUs are
 * busy); at 10 and 100 MB it took a quarter off.
 */
export const THREAD_MIN_BYTES = 4 * 1024 * 1024;
/**
 * Chunks of one job sent and not yet selected, at most: the thread's queue holds 1 MiB of a file's
 * 64 KiB chunks (up to 3 MiB of a visible text's, whose chunks reach 192 KiB of bytes).
 */
const MAX_IN_FLIGHT = 16;
/** The size of a chunk's copy (a file's read size; larger chunks get a copy of their own size). */
const COPY_BYTES = 64 * 1024;
/** The thread is not started again after this many failures (stops or failed jobs) in one process. */
const MAX_FAILURES = 3;

const ENTRY = new URL("./selection-worker.js", import.meta.url);
/** Tests run the TypeScript sources, where no compiled entry exists: they select in place. */
const AVAILABLE = ENTRY.protocol === "file:" && existsSync(fileURLToPath(ENTRY));

/** One observation's selection on the thread. */
export interface SelectionJob {
	/**
	 * Sends a copy of the next chunk. A promise when the thread is `MAX_IN_FLIGHT` chunks behind:
	 * wait for it before sending more (memory stays bounded whatever the observation's size).
	 */
	push(chunk: Buffer): Promise<void> | null;
	/** The selection once every chunk is selected; rejects when the job failed or the thread stopped. */
	finish(): Promise<SelectedLines>;
	/** Drops the job (the scan failed before its end). */
	cancel(): void;
}

interface JobState {
	inFlight: number;
	/** Wakes a sender waiting for the thread to catch up. */
	wake: (() => void) | null;
	failure: Error | null;
	resolve: ((result: SelectedLines) => void) | null;
	reject: ((error: Error) => void) | null;
}

class SelectionThread {
	online = false;
	private readonly worker: Worker;
	private readonly jobs = new Map<number, JobState>();
	private nextJob = 1;
	/**
	 * Memory for chunk copies, handed to the thread with each chunk and back with its
	 * acknowledgement: a 100 MB observation reuses a few buffers instead of leaving 1,600 to the
	 * thread's collector (they piled up to tens of MiB before it ran).
	 */
	private readonly buffers: ArrayBuffer[] = [];
	private closing = false;
	private ended = false;

	/**
	 * `stopped`: the thread ended (`failed`: not closed on purpose). `jobFailed`: a job was answered
	 * with a failure (a thread that fails every job is no better than one that stops).
	 */
	constructor(
		private readonly stopped: (thread: SelectionThread, failed: boolean) => void,
		private readonly jobFailed: (thread: SelectionThread) => void,
	) {
		// None of the host's node options: the entry is plain compiled JavaScript (an option such as
		// `--input-type` would even stop it).
		this.worker = new Worker(ENTRY, { execArgv: [] });
		this.worker.once("online", () => {
			this.online = true;
		});
		this.worker.on("message", (message: FromSelectionThread) => this.receive(message));
		this.worker.once("error", (error) => this.stop(`failed: ${error.message}`));
		// A message that cannot be read leaves its job unanswered: the thread is given up.
		this.worker.once("messageerror", (error) => {
			this.stop(`sent a message that could not be read: ${error.message}`);
			void this.worker.terminate();
		});
		this.worker.once("exit", (code) => this.stop(`exited (code ${code})`));
		// After the listeners: adding a message listener refs the thread again.
		this.worker.unref();
	}

	job(copyKept: boolean): SelectionJob {
		const job = this.nextJob++;
		const state: JobState = { inFlight: 0, wake: null, failure: null, resolve: null, reject: null };
		// A job keeps the process alive: an awaited selection must not be cut off by an idle exit.
		if (this.jobs.size === 0) this.worker.ref();
		this.jobs.set(job, state);
		this.send({ type: "start", job, copyKept });
		return {
			push: (chunk) => {
				if (state.failure !== null) return null;
				const buffer = this.copyOf(chunk);
				this.send({ type: "chunk", job, buffer, length: chunk.length }, [buffer]);
				state.inFlight++;
				if (state.inFlight < MAX_IN_FLIGHT) return null;
				return new Promise<void>((resolve) => {
					state.wake = resolve;
				});
			},
			finish: () => {
				if (state.failure !== null) return Promise.reject(state.failure);
				return new Promise<SelectedLines>((resolve, reject) => {
					state.resolve = resolve;
					state.reject = reject;
					this.send({ type: "end", job });
				});
			},
			cancel: () => {
				if (!this.jobs.has(job)) return;
				this.forget(job);
				this.send({ type: "cancel", job });
			},
		};
	}

	get jobCount(): number {
		return this.jobs.size;
	}

	close(): Promise<number> {
		this.closing = true;
		return this.worker.terminate();
	}

	/** A buffer of the pool (or a new one) whose first bytes are the chunk's, to be transferred. */
	private copyOf(chunk: Buffer): ArrayBuffer {
		const reused = this.buffers.pop();
		const buffer =
			reused !== undefined && reused.byteLength >= chunk.length
				? reused
				: new ArrayBuffer(Math.max(COPY_BYTES, chunk.length));
		new Uint8Array(buffer, 0, chunk.length).set(chunk);
		return buffer;
	}

	private send(message: ToSelectionThread, transfer?: ArrayBuffer[]): void {
		this.worker.postMessage(message, transfer);
	}

	private forget(job: number): void {
		this.jobs.delete(job);
		if (this.jobs.size === 0) this.worker.unref();
	}

	private receive(message: FromSelectionThread): void {
		if (message.type === "ack" && this.buffers.length < MAX_IN_FLIGHT) this.buffers.push(message.buffer);
		const state = this.jobs.get(message.job);
		if (state === undefined) return;
		if (message.type === "ack") {
			state.inFlight--;
			if (state.wake !== null && state.inFlight < MAX_IN_FLIGHT) {
				const wake = state.wake;
				state.wake = null;
				wake();
			}
			return;
		}
		this.forget(message.job);
		if (message.type === "done") {
			selected++;
			state.resolve?.(message.result);
		} else {
			state.reject?.(new Error(`line selection failed on its thread: ${message.message}`));
			this.jobFailed(this);
		}
	}

	/** Fails every job (their scans select again in place) and hands the thread back for replacement. */
	private stop(reason: string): void {
		// An error is followed by the exit: one stop.
		if (this.ended) return;
		this.ended = true;
		const error = new Error(`the line selection thread ${reason}`);
		for (const state of this.jobs.values()) {
			state.failure = error;
			state.wake?.();
			state.reject?.(error);
		}
		this.jobs.clear();
		this.stopped(this, !this.closing);
	}
}

let thread: SelectionThread | null = null;
let failures = 0;
let selected = 0;
/** Calls while no thread ran yet: the second starts the first thread (later ones start at once). */
let asked = 0;

/**
 * A job on the selection thread when it is running; null when the observation is selected in place
 * (no thread yet, starting, unavailable, or failed too often). The process's second call starts the
 * first thread; once one has run, the next call after it stopped or was closed starts another.
 */
export function selectionJob(copyKept: boolean): SelectionJob | null {
	if (thread !== null) return thread.online ? thread.job(copyKept) : null;
	if (!AVAILABLE || failures >= MAX_FAILURES || ++asked < 2) return null;
	try {
		thread = new SelectionThread(
			(stopped, failed) => {
				if (failed) failures++;
				if (thread === stopped) thread = null;
			},
			(failing) => {
				if (++failures < MAX_FAILURES || thread !== failing) return;
				thread = null;
				void failing.close();
			},
		);
	} catch {
		failures++;
	}
	return null;
}

/**
 * Whether the selection thread is running (started and online). `selectionJob` starts it; this
 * never does.
 */
export function selectionThreadRunning(): boolean {
	return thread?.online ?? false;
}

/** Jobs running on the selection thread now, and jobs it answered with a selection since the process started. */
export function selectionThreadJobs(): { running: number; selected: number } {
	return { running: thread?.jobCount ?? 0, selected };
}

/**
 * Stops the selection thread (a host releasing its memory; tests). Its running jobs are selected again
 * in place; the next large observation starts a new thread.
 */
export async function closeSelectionThread(): Promise<void> {
	const running = thread;
	thread = null;
	await running?.close();
}
