import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { writeAtomically } from "../archive/session-archive.js";
import { EMPTY_TASK, type TaskSnapshot } from "./snapshot.js";

/**
 * Where a session's task snapshot lives. Small on purpose: the agent can later keep snapshots in
 * its own transcript by implementing these two methods.
 */
export interface TaskStore {
	load(): Promise<TaskSnapshot>;
	/**
	 * Applies `change` to the newest stored snapshot and stores the result. Updates from separate
	 * processes never lose each other's changes. If `change` throws, nothing is stored.
	 */
	update(change: (current: TaskSnapshot) => TaskSnapshot): Promise<TaskSnapshot>;
}

/** A lock older than this is left over from a process that died while holding it. */
const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

export class TaskStoreError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "TaskStoreError";
	}
}

/** `task.json` in the session directory, replaced atomically on every save. */
export function fileTaskStore(sessionDir: string): TaskStore {
	const path = join(sessionDir, "task.json");
	return {
		async load() {
			let text: string;
			try {
				text = await readFile(path, "utf8");
			} catch (error) {
				if (["ENOENT", "ENOTDIR"].includes((error as NodeJS.ErrnoException).code ?? "")) return { ...EMPTY_TASK };
				throw new TaskStoreError(`cannot read the task snapshot ${path}: ${(error as Error).message}`);
			}
			try {
				return parseSnapshot(JSON.parse(text));
			} catch (error) {
				throw new TaskStoreError(
					`the task snapshot ${path} is corrupted (${(error as Error).message}); fix or delete the file to start an empty snapshot`,
				);
			}
		},
		async update(change) {
			await mkdir(sessionDir, { recursive: true, mode: 0o700 });
			return withLock(`${path}.lock`, async () => {
				const next = change(await this.load());
				await writeAtomically(path, JSON.stringify(next, null, "\t"));
				return next;
			});
		},
	};
}

/** Runs `work` while holding an exclusively created lock file. */
async function withLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (;;) {
		try {
			await (await open(lockPath, "wx", 0o600)).close();
			break;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
				throw new TaskStoreError(`cannot lock the task snapshot (${lockPath}): ${(error as Error).message}`);
			}
			const age = await stat(lockPath).then(
				(info) => Date.now() - info.mtimeMs,
				() => 0,
			);
			if (age > LOCK_STALE_MS) {
				await rm(lockPath, { force: true });
				continue;
			}
			if (Date.now() > deadline) {
				throw new TaskStoreError(
					`the task snapshot is locked by another process (${lockPath}); if no other prime-context process is running, delete that file`,
				);
			}
			await sleep(5 + Math.random() * 20);
		}
	}
	try {
		return await work();
	} finally {
		await rm(lockPath, { force: true });
	}
}

/** A store held in memory only (for hosts that persist snapshots themselves, and for one-off runs). */
export function memoryTaskStore(initial: TaskSnapshot = EMPTY_TASK): TaskStore {
	let current = initial;
	return {
		async load() {
			return current;
		},
		async update(change) {
			current = change(current);
			return current;
		},
	};
}

function parseSnapshot(raw: unknown): TaskSnapshot {
	const value = raw as Partial<TaskSnapshot> | null;
	const ok =
		value !== null &&
		typeof value === "object" &&
		(value.focus === null || typeof value.focus === "string") &&
		Array.isArray(value.openItems) &&
		value.openItems.every((item) => typeof item?.id === "string" && typeof item?.text === "string") &&
		Array.isArray(value.pins) &&
		value.pins.every((pin) => typeof pin === "string") &&
		Number.isSafeInteger(value.nextItem);
	if (!ok) throw new Error("unexpected shape");
	return value as TaskSnapshot;
}
