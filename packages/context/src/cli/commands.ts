import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, resolve } from "node:path";
import type { Readable } from "node:stream";
import { ArchiveError } from "../archive/types.js";
import { CLI_HINTS, type RecoveryResponse } from "../recovery/index.js";
import type { ContextSession } from "../session.js";
import { displayCommand, integerArg, type ParsedArgs, parseRange, UsageError } from "./args.js";
import { type CaptureFile, captureStream, createCaptureFile, freeBytes, printPrefix, runCommand } from "./capture.js";
import { deliverOutput, type Streams, write } from "./deliver.js";

export interface CommandIo extends Streams {
	stdin: Readable;
	/** Whether stdin is a terminal (then `capsule` without a file has nothing to read). */
	stdinIsTty: boolean;
	cwd: string;
}

/** Opens the session of this invocation (only commands that need it call it). */
export type SessionOpener = () => Promise<ContextSession>;

/** For run and capsule: the session, or a warning and null, so the output is still printed. */
async function openOrWarn(openSession: SessionOpener, io: CommandIo): Promise<ContextSession | null> {
	try {
		return await openSession();
	} catch (error) {
		if (error instanceof ArchiveError && /invalid session id/.test(error.message)) throw error;
		await write(io.stderr, `prime-context: archive unavailable (${(error as Error).message})\n`);
		return null;
	}
}

function noExtraArguments(args: ParsedArgs, max: number): void {
	if (args.positional.length > max) {
		throw new UsageError(
			`too many arguments for ${args.command}: ${args.positional.slice(max).join(" ")}; see \`prime-context ${args.command} --help\``,
		);
	}
}

export async function runRun(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	const argv = args.commandArgv;
	if (argv.length === 0) throw new UsageError("run needs a command: prime-context run -- <command> [args...]");
	const session = await openOrWarn(openSession, io);
	let capture: CaptureFile | null = null;
	let why: string | null = null;
	try {
		capture = await createCaptureFile();
		const room = await freeBytes(dirname(capture.path));
		if (room !== null && room < MIN_CAPTURE_ROOM) why = `only ${room} bytes free in ${tmpdir()}`;
	} catch (error) {
		why = (error as Error).message;
	}
	if (capture === null || why !== null) {
		// Nowhere to capture: the command still runs, its output goes straight to the terminal.
		await capture?.dispose().catch(() => {});
		await write(
			io.stderr,
			`prime-context: cannot capture output (${why}); running the command without archiving. Free space or set TMPDIR to a writable directory with room.\n`,
		);
		const run = await runCommand(argv, null);
		return run.startError ? reportStartError(argv, run.startError, io) : run.status;
	}
	try {
		const run = await runCommand(argv, capture.path);
		if (run.startError) return reportStartError(argv, run.startError, io);
		if (run.incomplete) {
			// Print what the command wrote, as it is; never lose it or the status to a failed copy.
			await printPrefix(run.incomplete.path, run.incomplete.bytes, io.stdout).catch(() => {});
			await write(
				io.stderr,
				`prime-context: output not archived (${run.incomplete.reason}); printed as captured, which may be incomplete. Free space in ${tmpdir()} or set TMPDIR to a directory with room.\n`,
			);
			return run.status;
		}
		// Whatever fails from here on, the command's own status is what this exits with.
		await deliverOutput(
			session,
			capture.path,
			{ tool: "run", command: displayCommand(argv), exitCode: run.status, isError: run.status !== 0 },
			io,
		).catch((error: Error) => write(io.stderr, `prime-context: could not print the output (${error.message})\n`));
		return run.status;
	} finally {
		await capture.dispose().catch(() => {});
	}
}

/** Less free space than this where output is captured, and the command's output goes straight to the terminal. */
const MIN_CAPTURE_ROOM = 1024 * 1024;

async function reportStartError(argv: string[], error: NodeJS.ErrnoException, io: CommandIo): Promise<number> {
	const hint = error.code === "ENOENT" ? "check the name and your PATH" : "check that it is an executable file";
	await write(io.stderr, `prime-context: cannot start ${JSON.stringify(argv[0])}: ${error.message}; ${hint}\n`);
	return 127;
}

export async function runCapsule(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	noExtraArguments(args, 1);
	const source = args.positional[0] ?? "-";
	const facts = { tool: "capsule", command: null, exitCode: null, isError: false };
	/** A stream read once (stdin, a pipe such as `<(cmd)`): copied to a file first, which is then observed. */
	const deliverStream = async (stream: Readable) => {
		const session = await openOrWarn(openSession, io);
		const capture = await createCaptureFile();
		try {
			await captureStream(stream, capture.path);
			await deliverOutput(session, capture.path, facts, io);
		} finally {
			await capture.dispose();
		}
		return 0;
	};
	if (source === "-") {
		if (io.stdinIsTty) {
			throw new UsageError(
				"capsule reads stdin, which is a terminal: pipe output in (cmd 2>&1 | prime-context capsule) or give a file",
			);
		}
		return deliverStream(io.stdin);
	}
	const path = resolve(io.cwd, source);
	const info = await stat(path).catch((error: Error) => {
		throw new UsageError(`cannot read ${source}: ${error.message}; give a readable file, or - for stdin`);
	});
	if (info.isFIFO()) return deliverStream(createReadStream(path));
	if (!info.isFile()) {
		throw new UsageError(`${source} is not a regular file or a pipe; give a file, or - for stdin`);
	}
	const session = await openOrWarn(openSession, io);
	await deliverOutput(session, path, facts, io);
	return 0;
}

async function printRecovery(response: RecoveryResponse, io: CommandIo): Promise<number> {
	const out = response.isError ? io.stderr : io.stdout;
	await write(out, `${response.isError ? response.text.replace(/^Error: /, "prime-context: ") : response.text}\n`);
	return response.isError ? 1 : 0;
}

export async function runList(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	noExtraArguments(args, 1);
	const limit = integerArg("limit", args.positional[0], 1, 1000);
	const session = await openSession();
	return printRecovery(await session.recover({ action: "list", limit: limit ?? 20 }, human), io);
}

export async function runRead(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	noExtraArguments(args, 2);
	const id = args.positional[0];
	if (!id)
		throw new UsageError(
			"read needs an observation id: prime-context read <id> [start:end]; list ids with prime-context list",
		);
	const range = args.positional[1] ? parseRange(args.positional[1]) : {};
	const session = await openSession();
	return printRecovery(await session.recover({ action: "read", id, ...range }, human), io);
}

export async function runSearch(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	const [target, ...words] = args.positional;
	if (!target || words.length === 0) {
		throw new UsageError("search needs a target and text: prime-context search <id|all> <text>");
	}
	const request = {
		action: "search",
		id: target === "all" ? undefined : target,
		query: words.join(" "),
		contextLines: integerArg("--context", args.options.context, 0, 20),
		matchOffset: integerArg("--offset", args.options.offset, 0, Number.MAX_SAFE_INTEGER),
		maxMatches: integerArg("--max", args.options.max, 1, 1000),
		limit: integerArg("--limit", args.options.limit, 1, 1000),
	};
	const session = await openSession();
	return printRecovery(await session.recover(request, human), io);
}

export async function runStatus(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	noExtraArguments(args, 0);
	const session = await openSession();
	return printRecovery(await session.recover({ action: "status" }, human), io);
}

/** focus, add, done, pin, unpin: the task snapshot, as the `/pc` commands change it. */
export async function runTaskUpdate(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	const text = args.positional.join(" ").trim();
	const command = args.command as "focus" | "add" | "done" | "pin" | "unpin";
	if (text === "") {
		const what = command === "focus" ? "text (or clear)" : command === "add" ? "item text" : "an id";
		throw new UsageError(`${command} needs ${what}; see \`prime-context ${command} --help\``);
	}
	if (command !== "focus" && command !== "add") noExtraArguments(args, 1);
	const update =
		command === "focus"
			? { focus: text === "clear" ? null : text }
			: command === "add"
				? { add: [text] }
				: command === "done"
					? { complete: [text] }
					: { [command]: [text] };
	const session = await openSession();
	return printRecovery(await session.recover({ action: "update", ...update }, human), io);
}

export async function runDoctor(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	noExtraArguments(args, 0);
	const report = await (await openSession()).doctor();
	await write(io.stdout, `${report.lines.join("\n")}\n`);
	return report.ok ? 0 : 1;
}

export async function runCleanup(args: ParsedArgs, openSession: SessionOpener, io: CommandIo): Promise<number> {
	noExtraArguments(args, 0);
	const session = await openSession();
	const removed = await session.cleanup();
	const message =
		removed.observations === 0 && removed.bytes === 0
			? `Nothing to remove: session ${session.sessionId} has no archive (${removed.dir}).`
			: `Removed session ${session.sessionId}: ${removed.observations} observation${removed.observations === 1 ? "" : "s"}, ${removed.bytes} bytes (${removed.dir}). Other sessions are untouched.`;
	await write(io.stdout, `${message}\n`);
	return 0;
}

const human = { audience: "human" as const, hints: CLI_HINTS };
