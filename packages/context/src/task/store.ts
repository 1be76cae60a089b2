import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomically } from "../archive/session-archive.js";
import { LockError, withFileLock } from "../file-lock.js";
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
			try {
				return await withFileLock(
					`${path}.lock`,
					async () => {
						const next = change(await this.load());
						await writeAtomically(path, JSON.stringify(next, null, "\t"));
						return next;
					},
					{ what: "the task snapshot", waitMs: 5_000, staleMs: 10_000 },
				);
			} catch (error) {
				throw error instanceof LockError ? new TaskStoreError(error.message) : error;
			}
		},
	};
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
