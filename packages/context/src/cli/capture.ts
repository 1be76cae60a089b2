import { type StdioOptions, spawn } from "node:child_process";
import { createReadStream, createWriteStream } from "node:fs";
import { type FileHandle, mkdtemp, open, rm, statfs } from "node:fs/promises";
import { constants, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";

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
 * Runs `argv` without a shell, stdin inherited, stdout and stderr both writing to one private file,
 * so they interleave in arrival order with no loss (a pipe would let programs that exit abruptly drop
 * buffered output) and no memory cost. When the command exits, the first bytes up to the size at
 * that moment are copied to `path`: processes it left behind may keep writing to the live file, but
 * the result is frozen. Signals sent to this process are passed to the command while it runs.
 * With `path` null the command writes straight to this process's own stdout and stderr.
 */
export async function runCommand(argv: string[], path: string | null): Promise<CapturedRun> {
	if (path === null) {
		const { size: _, ...result } = await spawnForwarding(argv, "inherit");
		return result;
	}
	const live = `${path}.live`;
	const handle = await open(live, "w", 0o600);
	let run: CommandRun & { size: number };
	try {
		run = await spawnForwarding(argv, handle);
	} finally {
		await handle.close();
	}
	const { size, ...result } = run;
	// A full disk fails the command's own writes: what the file holds may then be only a part.
	if (size > 0 && (await freeBytes(dirname(path))) === 0) {
		return { ...result, incomplete: { path: live, bytes: size, reason: "the temp disk is full" } };
	}
	try {
		await copyPrefix(live, path, size);
	} catch (error) {
		return { ...result, incomplete: { path: live, bytes: size, reason: (error as Error).message } };
	}
	await rm(live, { force: true });
	return result;
}

/** A run whose output could not be captured whole: what it wrote is in `path` (first `bytes` bytes). */
export interface CapturedRun extends CommandRun {
	incomplete?: { path: string; bytes: number; reason: string };
}

/** Bytes free for this user on the filesystem holding `dir`; null when it cannot be told. */
export async function freeBytes(dir: string): Promise<number | null> {
	try {
		const info = await statfs(dir);
		return info.bavail * info.bsize;
	} catch {
		return null;
	}
}

/** Prints the first `bytes` bytes of a file. */
export async function printPrefix(path: string, bytes: number, out: Writable): Promise<void> {
	if (bytes <= 0) return;
	await pipeline(createReadStream(path, { start: 0, end: bytes - 1 }), out, { end: false });
}

/** Spawns with both output streams on `output`; reports the output file's size at exit. */
function spawnForwarding(argv: string[], output: FileHandle | "inherit"): Promise<CommandRun & { size: number }> {
	return new Promise((resolve) => {
		const stdio: StdioOptions = output === "inherit" ? "inherit" : ["inherit", output.fd, output.fd];
		const child = spawn(argv[0], argv.slice(1), { stdio });
		const forward = (signal: NodeJS.Signals) => {
			if (child.exitCode === null && child.signalCode === null) child.kill(signal);
		};
		for (const signal of FORWARDED) process.on(signal, forward);
		const done = (result: CommandRun) => {
			for (const signal of FORWARDED) process.off(signal, forward);
			if (output === "inherit") return resolve({ ...result, size: 0 });
			output.stat().then(
				(info) => resolve({ ...result, size: info.size }),
				() => resolve({ ...result, size: 0 }),
			);
		};
		child.on("error", (error: NodeJS.ErrnoException) => {
			done({ exitCode: null, signal: null, status: 127, startError: error });
		});
		child.on("exit", (code, signal) => {
			const signalNumber = signal ? (constants.signals[signal] ?? 0) : 0;
			done({ exitCode: code, signal, status: code ?? 128 + signalNumber });
		});
	});
}

/** Copies the first `bytes` bytes of `from` into a new private file `to`. */
async function copyPrefix(from: string, to: string, bytes: number): Promise<void> {
	const target = createWriteStream(to, { mode: 0o600 });
	if (bytes === 0) {
		target.end();
		await finished(target);
		return;
	}
	await pipeline(createReadStream(from, { start: 0, end: bytes - 1 }), target);
}

/** Copies a stream (stdin) into `path`. */
export async function captureStream(input: Readable, path: string): Promise<void> {
	await pipeline(input, createWriteStream(path, { mode: 0o600 }));
}
