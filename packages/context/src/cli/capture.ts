import { spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/** A private temp file holding captured output; `dispose` removes it. */
export interface CaptureFile {
	path: string;
	dispose(): Promise<void>;
}

export async function createCaptureFile(): Promise<CaptureFile> {
	const dir = await mkdtemp(join(tmpdir(), "prime-context-"));
	return { path: join(dir, "output"), dispose: () => rm(dir, { recursive: true, force: true }) };
}

export interface CommandRun {
	/** The command's exit code, or null when a signal ended it or it never started. */
	exitCode: number | null;
	signal: NodeJS.Signals | null;
	/** What `prime-context run` exits with: the exit code, 128+N for signal N, 127 when it could not start. */
	status: number;
	/** Why the command could not start. */
	startError?: NodeJS.ErrnoException;
}

const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/**
 * After the command exits, its own unread output is at most what the pipes buffer (a process cannot
 * exit while blocked writing), so a short idle wait drains it; anything later comes from processes
 * it left behind and is not part of this result. The file is frozen then.
 */
const DRAIN_IDLE_MS = 100;
const DRAIN_MAX_MS = 1000;

/**
 * Runs `argv` without a shell, stdin inherited, stdout and stderr interleaved in arrival order into
 * `path`. Signals sent to this process are passed to the command while it runs.
 */
export function runCommand(argv: string[], path: string): Promise<CommandRun> {
	return new Promise((resolve) => {
		const file = createWriteStream(path, { mode: 0o600 });
		const child = spawn(argv[0], argv.slice(1), { stdio: ["inherit", "pipe", "pipe"] });
		const streams = [child.stdout, child.stderr];
		let frozen = false;
		let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
		let idle: NodeJS.Timeout | undefined;
		let cap: NodeJS.Timeout | undefined;

		const forward = (signal: NodeJS.Signals) => {
			if (child.exitCode === null && child.signalCode === null) child.kill(signal);
		};
		for (const signal of FORWARDED) process.on(signal, forward);

		const finish = (result: CommandRun) => {
			if (frozen) return;
			frozen = true;
			clearTimeout(idle);
			clearTimeout(cap);
			for (const signal of FORWARDED) process.off(signal, forward);
			for (const stream of streams) stream.destroy();
			closeFile(file).then(() => resolve(result));
		};
		const settle = () => {
			if (!exited) return;
			const { code, signal } = exited;
			const signalNumber = signal ? (constants.signals[signal] ?? 0) : 0;
			finish({ exitCode: code, signal, status: code ?? 128 + signalNumber });
		};

		for (const stream of streams) {
			stream.on("data", (chunk: Buffer) => {
				if (frozen) return;
				if (exited) {
					clearTimeout(idle);
					idle = setTimeout(settle, DRAIN_IDLE_MS);
				}
				if (!file.write(chunk)) {
					for (const s of streams) s.pause();
					file.once("drain", () => {
						for (const s of streams) s.resume();
					});
				}
			});
		}
		child.on("error", (error: NodeJS.ErrnoException) => {
			finish({ exitCode: null, signal: null, status: 127, startError: error });
		});
		child.on("exit", (code, signal) => {
			exited = { code, signal };
			idle = setTimeout(settle, DRAIN_IDLE_MS);
			cap = setTimeout(settle, DRAIN_MAX_MS);
		});
		child.on("close", () => {
			exited ??= { code: child.exitCode, signal: child.signalCode };
			settle();
		});
	});
}

function closeFile(file: WriteStream): Promise<void> {
	return new Promise((resolve) => {
		if (file.closed) return resolve();
		file.end(() => resolve());
		file.once("error", () => resolve());
	});
}

/** Copies a stream (stdin) into `path`. */
export async function captureStream(input: Readable, path: string): Promise<void> {
	await pipeline(input, createWriteStream(path, { mode: 0o600 }));
}
