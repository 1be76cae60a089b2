import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import type { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ContextSession } from "../session.js";

/** The visible text handed to the broker beside the complete file (bounded: the file is the source of truth). */
const VISIBLE_HEAD_BYTES = 1024 * 1024;

export interface Delivery {
	tool: string;
	command: string | null;
	exitCode: number | null;
	isError: boolean;
}

export interface Streams {
	stdout: Writable;
	stderr: Writable;
}

/**
 * Hands a captured output file to the broker and prints what the model would see. Whenever the
 * output was not archived, or the broker passed it through, the original bytes are printed from the
 * file itself, so nothing is ever lost or altered.
 */
export async function deliverOutput(
	session: ContextSession | null,
	path: string,
	facts: Delivery,
	streams: Streams,
): Promise<void> {
	if (!session) {
		await printFile(path, streams.stdout);
		return;
	}
	let result: Awaited<ReturnType<ContextSession["observe"]>>;
	try {
		result = await session.observe({
			tool: facts.tool,
			text: await readHead(path, VISIBLE_HEAD_BYTES),
			fullOutputPath: path,
			isError: facts.isError,
			exitCode: facts.exitCode,
			command: facts.command ?? undefined,
		});
	} catch (error) {
		await write(
			streams.stderr,
			`prime-context: output not archived (${(error as Error).message}); printing it in full\n`,
		);
		await printFile(path, streams.stdout);
		return;
	}
	if (result.stateError) await write(streams.stderr, `prime-context: ${result.stateError}\n`);
	if (!result.archived) {
		const why = result.archiveError ?? "output not archived; the original output is shown instead";
		await write(streams.stderr, `prime-context: ${why}\n`);
		await printFile(path, streams.stdout);
	} else if (result.decision === "pass-through") {
		await printFile(path, streams.stdout);
	} else {
		await write(streams.stdout, result.text.endsWith("\n") ? result.text : `${result.text}\n`);
		// The capsule speaks to a model; a person at the terminal gets the command-line spelling.
		await write(
			streams.stderr,
			`prime-context: archived as ${result.id}; ${commandLineHints(result.id, result.text)}\n`,
		);
	}
}

/**
 * The capsule's own read and search suggestions (tool spelling) respelled for the command line,
 * so the person sees the same window and query the model would; generic ones when there are none.
 */
export function commandLineHints(id: string, capsule: string): string {
	const read = /prime_context action=read id=(obs_\d+) startLine=(\d+) endLine=(\d+)/.exec(capsule);
	const search = /prime_context action=search id=(obs_\d+) query=("(?:[^"\\]|\\.)*")/.exec(capsule);
	const hints = [
		read ? `prime-context read ${read[1]} ${read[2]}:${read[3]}` : `prime-context read ${id} 1:80`,
		search ? `prime-context search ${search[1]} ${search[2]}` : `prime-context search ${id} <text>`,
	];
	return `see more with: ${hints.join("  or  ")}`;
}

async function readHead(path: string, maxBytes: number): Promise<string> {
	const handle = await open(path, "r");
	try {
		const buffer = Buffer.alloc(maxBytes);
		const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
		return buffer.subarray(0, bytesRead).toString("utf8");
	} finally {
		await handle.close();
	}
}

/** A reader that went away (`prime-context run ... | head`) is not an error: printing just stops. */
function ignoreClosedReader(error: NodeJS.ErrnoException): void {
	if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
}

export async function printFile(path: string, out: Writable): Promise<void> {
	await pipeline(createReadStream(path), out, { end: false }).catch(ignoreClosedReader);
}

export function write(out: Writable, text: string | Buffer): Promise<void> {
	return new Promise<void>((resolve, reject) => {
		out.write(text, (error) => (error ? reject(error) : resolve()));
	}).catch(ignoreClosedReader);
}
