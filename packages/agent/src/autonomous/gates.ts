import { createWriteStream, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { spawnGuardedGroup } from "prime-agent-kernel";

/** A gate's run is stopped after this long and counts as failed. */
export const GATE_TIMEOUT_MS = 5 * 60_000;
/** At most this many characters of a gate's output go into what the model sees. */
export const GATE_OUTPUT_LIMIT = 6_000;
/** The tail kept in memory while a gate runs (the whole output goes to its log file). */
const TAIL_BYTES = 64 * 1024;
/**
 * After the gate's shell exits, how long what it wrote is still read from the pipes. Its group is
 * dead by then, so the pipes close at once unless a process that left the group (`setsid`, a
 * daemon) holds them: that one is not waited for.
 */
export const GATE_DRAIN_MS = 1_000;
/** The shell's statuses for a command it could not run: found but not executable, not found. */
const CANNOT_RUN_STATUSES = new Set([126, 127]);

export interface GateRun {
	command: string;
	/** The exit status; null when the gate was killed (timeout, abort) or could not start. */
	exitCode: number | null;
	passed: boolean;
	timedOut: boolean;
	aborted: boolean;
	/**
	 * The gate could not run its command: the shell could not start, or it exited 127 (a command or
	 * an interpreter not found) or 126 (found but not executable). Its configuration is wrong, not
	 * the workspace.
	 */
	cannotRun: boolean;
	durationMs: number;
	/** The whole output (stdout and stderr as they came) is in this file. */
	logFile: string;
	/** The last part of the output (at most 64 KiB), for when the archive cannot be read. */
	tail: string;
	/** Why it could not start, when it could not. */
	error?: string;
}

/**
 * Run one gate: `sh -c <command>` in `cwd`, stdout and stderr into `logFile` as they come. Its
 * result is decided when its shell exits: what the gate leaves running in its process group
 * (`server &`) is killed then, and output written after that is not awaited (see
 * `GATE_DRAIN_MS`). On timeout or abort the whole group is killed (then it counts as failed); the
 * group also dies with the agent, however the agent dies. Never throws.
 */
export function runGate(
	command: string,
	options: { cwd: string; env: NodeJS.ProcessEnv; logFile: string; timeoutMs?: number; signal?: AbortSignal },
): Promise<GateRun> {
	const started = Date.now();
	mkdirSync(dirname(options.logFile), { recursive: true, mode: 0o700 });
	const log = createWriteStream(options.logFile, { mode: 0o600 });
	let tail = Buffer.alloc(0);
	const keep = (chunk: Buffer) => {
		log.write(chunk);
		tail = Buffer.concat([tail, chunk]);
		if (tail.length > TAIL_BYTES) tail = tail.subarray(tail.length - TAIL_BYTES);
	};
	return new Promise((resolve) => {
		let timedOut = false;
		let aborted = false;
		let error: string | undefined;
		let exitCode: number | null = null;
		let durationMs = 0;
		const child = spawnGuardedGroup("sh", ["-c", command], {
			cwd: options.cwd,
			env: options.env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		const running = () => child.pid !== undefined && child.exitCode === null && child.signalCode === null;
		// Only while the shell runs: once it has exited, its group was killed with it (spawnGuardedGroup)
		// and its id may be reused by a stranger's group.
		const kill = () => {
			if (!running()) return;
			try {
				process.kill(-(child.pid as number), "SIGTERM");
			} catch {}
			setTimeout(() => {
				if (!running()) return;
				try {
					process.kill(-(child.pid as number), "SIGKILL");
				} catch {}
			}, 2_000).unref();
		};
		const timer = setTimeout(() => {
			timedOut = true;
			kill();
		}, options.timeoutMs ?? GATE_TIMEOUT_MS);
		const onAbort = () => {
			aborted = true;
			kill();
		};
		if (options.signal?.aborted) onAbort();
		else options.signal?.addEventListener("abort", onAbort, { once: true });
		child.stdout?.on("data", keep);
		child.stderr?.on("data", keep);

		let resolved = false;
		let drain: NodeJS.Timeout | undefined;
		const finish = () => {
			if (resolved) return;
			resolved = true;
			clearTimeout(drain);
			// A process that left the group may still hold the pipes: stop reading them.
			child.stdout?.destroy();
			child.stderr?.destroy();
			if (error) keep(Buffer.from(`[the gate could not start: ${error}]\n`));
			const shellCouldNot = !timedOut && !aborted && exitCode !== null && CANNOT_RUN_STATUSES.has(exitCode);
			log.end(() =>
				resolve({
					command,
					exitCode,
					passed: exitCode === 0 && !timedOut && !aborted && !error,
					timedOut,
					aborted,
					cannotRun: error !== undefined || shellCouldNot,
					durationMs,
					logFile: options.logFile,
					tail: tail.toString("utf8"),
					...(error ? { error } : {}),
				}),
			);
		};
		/** The shell exited (or never started): the result is decided; read what is left, briefly. */
		const settle = (code: number | null) => {
			if (drain || resolved) return;
			exitCode = code;
			durationMs = Date.now() - started;
			clearTimeout(timer);
			options.signal?.removeEventListener("abort", onAbort);
			drain = setTimeout(finish, GATE_DRAIN_MS);
		};
		child.on("error", (failure) => {
			error = failure.message;
			if (child.pid === undefined) settle(null);
		});
		child.on("exit", (code) => settle(code));
		child.on("close", (code) => {
			settle(code);
			finish();
		});
	});
}

/**
 * Text of at most `limit` characters: the start and the end of `text` around a marker saying how
 * much was left out and where the whole text is.
 */
export function boundOutput(text: string, limit: number, where: string): string {
	if (text.length <= limit) return text;
	const marker = (omitted: number) => `\n[... ${omitted.toLocaleString("en-US")} characters left out; ${where} ...]\n`;
	const room = limit - marker(text.length).length;
	const head = Math.floor(room / 4);
	const tailLength = room - head;
	return `${text.slice(0, head)}${marker(text.length - head - tailLength)}${text.slice(text.length - tailLength)}`;
}
