import { createWriteStream, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { spawnGuardedGroup } from "prime-agent-kernel";

/** A gate's run is stopped after this long and counts as failed. */
export const GATE_TIMEOUT_MS = 5 * 60_000;
/** At most this many characters of a gate's output go into what the model sees. */
export const GATE_OUTPUT_LIMIT = 6_000;
/** The tail kept in memory while a gate runs (the whole output goes to its log file). */
const TAIL_BYTES = 64 * 1024;

export interface GateRun {
	command: string;
	/** The exit status; null when the gate was killed (timeout, abort) or could not start. */
	exitCode: number | null;
	passed: boolean;
	timedOut: boolean;
	aborted: boolean;
	durationMs: number;
	/** The whole output (stdout and stderr as they came) is in this file. */
	logFile: string;
	/** The last part of the output (at most 64 KiB), for when the archive cannot be read. */
	tail: string;
	/** Why it could not start, when it could not. */
	error?: string;
}

/**
 * Run one gate: `sh -c <command>` in `cwd`, stdout and stderr into `logFile` as they come, its
 * process group killed on timeout or abort (then it counts as failed). What the gate leaves running
 * in the background (`server &`) is killed when its shell exits, and the whole group dies with the
 * agent, however the agent dies. Never throws.
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
		const child = spawnGuardedGroup("sh", ["-c", command], {
			cwd: options.cwd,
			env: options.env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		const kill = () => {
			if (child.pid === undefined || child.exitCode !== null) return;
			try {
				process.kill(-child.pid, "SIGTERM");
			} catch {}
			setTimeout(() => {
				try {
					if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
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
		child.on("error", (failure) => {
			error = failure.message;
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			options.signal?.removeEventListener("abort", onAbort);
			if (error) keep(Buffer.from(`[the gate could not start: ${error}]\n`));
			log.end(() =>
				resolve({
					command,
					exitCode: code,
					passed: code === 0 && !timedOut && !aborted && !error,
					timedOut,
					aborted,
					durationMs: Date.now() - started,
					logFile: options.logFile,
					tail: tail.toString("utf8"),
					...(error ? { error } : {}),
				}),
			);
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
