/**
 * A worker's queue on disk (`workers/<key>/queue.json`, beside `schedules.json`): what users queued
 * while the agent worked (steering, follow-ups, prompts), written at once on every change, so that a
 * worker that crashes (SIGKILL, out of memory) leaves it for the worker started in its place. Only
 * each item's kind and text are kept. The file exists only while something is queued: an empty
 * queue, and a clean stop, remove it.
 *
 * The file is read as untrusted: one that is torn, too large or holds anything but a list of
 * items is ignored whole (with a line in the worker's log), never half-replayed.
 */
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { jsonProblem, writePrivateJson } from "../home/index.js";
import type { QueuedInput } from "../link/index.js";

export const QUEUE_FILE = "queue.json";
/** A larger file is not read (no queue a user typed comes near it). */
export const MAX_QUEUE_FILE_BYTES = 64 * 1024 * 1024;

const KINDS: readonly string[] = ["steer", "follow_up", "prompt"] satisfies QueuedInput["kind"][];

export class QueueFile {
	/** `log`: a line for the worker's log (a refused write, an ignored file). */
	constructor(
		readonly path: string,
		private readonly log: (line: string) => void,
	) {}

	/** What the file holds, in order; none when there is no file or it cannot be trusted (logged). */
	read(): QueuedInput[] {
		let size: number;
		try {
			size = statSync(this.path).size;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
			return this.ignored((error as Error).message);
		}
		if (size > MAX_QUEUE_FILE_BYTES)
			return this.ignored(`it is ${size} bytes, more than the ${MAX_QUEUE_FILE_BYTES} a queue file may hold`);
		let text: string;
		try {
			text = readFileSync(this.path, "utf8");
		} catch (error) {
			return this.ignored((error as Error).message);
		}
		let data: unknown;
		try {
			data = JSON.parse(text);
		} catch (error) {
			// Never quoted: the texts are the user's.
			return this.ignored(jsonProblem(text, error as Error));
		}
		const items = (data as { items?: unknown } | null)?.items;
		if (!Array.isArray(items)) return this.ignored("it holds no list of items");
		const bad = items.findIndex((item) => !isQueuedInput(item));
		if (bad !== -1)
			return this.ignored(
				`item ${bad + 1} is not a steer, follow_up or prompt with a text (not empty, without NUL characters)`,
			);
		return items.map((item: QueuedInput) => ({ kind: item.kind, text: item.text }));
	}

	/**
	 * Keep `queued` (none: the file is removed). A write the disk refuses (full) is logged and never
	 * stops the worker; the file, now out of date, is removed, so that a later start never runs
	 * again what has run meanwhile.
	 */
	write(queued: readonly QueuedInput[]): void {
		// The agent's folder was removed (pruned, its home deleted): it is not made again.
		if (!existsSync(dirname(this.path))) return;
		try {
			if (queued.length === 0) rmSync(this.path, { force: true });
			else writePrivateJson(this.path, { version: 1, items: queued.map(({ kind, text }) => ({ kind, text })) });
		} catch (error) {
			this.log(
				`Could not write this worker's queue (${queued.length} queued): ${(error as Error).message} A crash now loses what is queued.`,
			);
			try {
				rmSync(this.path, { force: true });
			} catch {}
		}
	}

	private ignored(why: string): [] {
		this.log(`The queue file ${this.path} was ignored (${why}); nothing in it runs.`);
		return [];
	}
}

function isQueuedInput(item: unknown): item is QueuedInput {
	if (typeof item !== "object" || item === null) return false;
	const { kind, text } = item as Record<string, unknown>;
	return (
		typeof kind === "string" &&
		KINDS.includes(kind) &&
		typeof text === "string" &&
		text.trim() !== "" &&
		!text.includes("\0")
	);
}
