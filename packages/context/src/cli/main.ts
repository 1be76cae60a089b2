#!/usr/bin/env node
/**
 * `prime-context`: the standalone command line. Usable by a person or any agent, with no agent
 * host at all: run a command or pipe a log through the broker, then list, read and search the archive.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { checkSessionId } from "../archive/paths.js";
import { ArchiveError } from "../archive/types.js";
import { openContextSession } from "../session.js";
import { COMMANDS, type CommandName, type ParsedArgs, parseArgs, UsageError } from "./args.js";
import {
	type CommandIo,
	runCapsule,
	runCleanup,
	runDoctor,
	runList,
	runRead,
	runRun,
	runSearch,
	runStatus,
	runTaskUpdate,
	type SessionOpener,
} from "./commands.js";
import { write } from "./deliver.js";
import { helpText } from "./help.js";

const HANDLERS: Record<
	Exclude<CommandName, "help">,
	(args: ParsedArgs, open: SessionOpener, io: CommandIo) => Promise<number>
> = {
	run: runRun,
	capsule: runCapsule,
	list: runList,
	read: runRead,
	search: runSearch,
	status: runStatus,
	focus: runTaskUpdate,
	add: runTaskUpdate,
	done: runTaskUpdate,
	pin: runTaskUpdate,
	unpin: runTaskUpdate,
	doctor: runDoctor,
	cleanup: runCleanup,
};

/** Runs the command line and returns the exit status: 0 ok, 1 failure, 2 usage error, else the command's own. */
export async function main(argv: string[], io: CommandIo): Promise<number> {
	let args: ParsedArgs;
	try {
		args = parseArgs(argv);
	} catch (error) {
		return reportUsage(error as Error, io);
	}
	if (args.help || args.command === null || args.command === "help") {
		const asked = args.command === "help" ? args.positional[0] : undefined;
		if (asked !== undefined && !(COMMANDS as readonly string[]).includes(asked)) {
			return reportUsage(new UsageError(`no help for ${JSON.stringify(asked)}; commands: ${COMMANDS.join(", ")}`), io);
		}
		const topic = args.command === "help" ? ((asked as CommandName | undefined) ?? null) : args.command;
		// Asked for help: stdout, success. Gave no command: the same text as a usage error.
		const failed = args.command === null && !args.help;
		await write(failed ? io.stderr : io.stdout, `${helpText(topic)}\n`);
		return failed ? 2 : 0;
	}
	const openSession: SessionOpener = () => openContextSession({ sessionId: args.session, cwd: io.cwd });
	try {
		if (args.session !== undefined) checkSessionId(args.session);
		return await HANDLERS[args.command](args, openSession, io);
	} catch (error) {
		if (error instanceof UsageError) return reportUsage(error, io);
		if (error instanceof ArchiveError && /invalid session id/.test(error.message)) return reportUsage(error, io);
		await write(io.stderr, `prime-context: ${(error as Error).message}\n`);
		return 1;
	}
}

async function reportUsage(error: Error, io: CommandIo): Promise<number> {
	await write(io.stderr, `prime-context: ${error.message}\n`);
	return 2;
}

function isEntryPoint(): boolean {
	try {
		return realpathSync(process.argv[1] ?? "") === realpathSync(fileURLToPath(import.meta.url));
	} catch {
		return false;
	}
}

/** Runs the command line in this process: arguments, standard streams, exit status. */
export function runFromProcess(): void {
	// A closed reader surfaces as an asynchronous EPIPE on the stream; the write paths handle it.
	for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
	main(process.argv.slice(2), {
		stdin: process.stdin,
		stdout: process.stdout,
		stderr: process.stderr,
		stdinIsTty: process.stdin.isTTY === true,
		cwd: process.cwd(),
	}).then(
		(status) => {
			process.exitCode = status;
		},
		(error: Error) => {
			process.stderr.write(`prime-context: unexpected failure: ${error.stack ?? error.message}\n`);
			process.exitCode = 1;
		},
	);
}

if (isEntryPoint()) runFromProcess();
