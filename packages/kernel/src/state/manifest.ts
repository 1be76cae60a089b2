import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CellResult } from "../types.js";

/** Caps of a snapshot: one variable, and all variables together. */
export const STATE_CAPS = { variableBytes: 16 * 1024 * 1024, totalBytes: 256 * 1024 * 1024 } as const;

/** The file naming every saved variable; written last and atomically, so it is always whole. */
export const STATE_MANIFEST = "manifest.json";

/** The folder of manifests kept per session entry (`<entry>.json`), sharing `vars/` with the latest. */
export const STATE_ENTRIES = "entries";

/** What a session entry id must look like to name a manifest file (anything else is refused). */
export const ENTRY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The manifest of a snapshot folder: the latest save, or the one kept for `entry`. Throws for an
 * entry id that could not name a file of the folder (a session file is untrusted).
 */
export function stateManifestPath(dir: string, entry?: string): string {
	if (entry === undefined) return join(dir, STATE_MANIFEST);
	if (!ENTRY_ID.test(entry)) throw new StateSnapshotError(`"${entry}" is not a session entry id.`);
	return join(dir, STATE_ENTRIES, `${entry}.json`);
}

export interface SaveStateOptions {
	/** Names never saved (handles the caller injects again after a restore). */
	exclude?: readonly string[];
	maxVariableBytes?: number;
	maxTotalBytes?: number;
	/**
	 * The session entry this state belongs to (the result of the cell it follows): the manifest is
	 * also kept as `entries/<entry>.json`, so a branch from that entry can restore it.
	 */
	entry?: string;
	/** Bound of the kept history (variable files, entry manifests); past it the oldest entries go. */
	maxHistoryBytes?: number;
	maxHistoryEntries?: number;
}

export interface SavedVariable {
	name: string;
	/** File under `vars/`, named by the SHA-256 of its bytes. */
	file: string;
	bytes: number;
	/** Python type name of the value. */
	type: string;
	/** A class or function defined in a cell (pickled by value, restored first). */
	definition: boolean;
}

export interface UnsaveableVariable {
	name: string;
	type?: string;
	/** Why it was not saved: the pickling error, or which cap it passed. */
	reason: string;
}

/** What `manifest.json` holds. */
export interface StateManifest {
	format: 1;
	savedAt: string;
	totalBytes: number;
	variables: SavedVariable[];
	/** Module bindings (`np` -> `numpy`): never pickled, imported again on restore. */
	imports: Record<string, string>;
	unsaveable: UnsaveableVariable[];
	/** The session entry the save was labelled with (absent in older snapshots and unlabelled saves). */
	entry?: string;
}

export interface StateSaveReport extends StateManifest {
	/** Variable files written by this save (unchanged values keep their file). */
	written: number;
	/** Entry manifests this save dropped because the history passed its bound. */
	prunedEntries: string[];
	/** Time spent inside the kernel. */
	durationMs: number;
}

export interface StateRestoreReport {
	/** Variables loaded, in load order. */
	restored: string[];
	/** Module bindings imported again. */
	imports: string[];
	/** Names that could not be loaded or imported, with the reason. */
	failed: { name: string; reason: string }[];
	/** Names the last save could not save. */
	unsaveable: UnsaveableVariable[];
	/** There was no snapshot in the folder. */
	missing?: boolean;
	/** The manifest was unreadable: nothing was restored. */
	corrupt?: string;
}

/** The snapshot cell itself failed (the kernel died, was interrupted, or the state module broke). */
export class StateSnapshotError extends Error {
	override name = "StateSnapshotError";
}

/**
 * Read a snapshot's manifest (the latest, or the one kept for `entry`) without a kernel:
 * `undefined` when there is none; throws with the file name when it exists but is unreadable.
 */
export function readStateManifest(dir: string, entry?: string): StateManifest | undefined {
	const path = stateManifestPath(dir, entry);
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw error;
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (error) {
		throw new StateSnapshotError(`The state manifest ${path} is not valid JSON (${(error as Error).message}).`);
	}
	if (!raw || typeof raw !== "object" || (raw as Record<string, unknown>).format !== 1) {
		throw new StateSnapshotError(`The state manifest ${path} has an unknown format.`);
	}
	return manifestFromPython(raw as Record<string, unknown>);
}

/** Why a state cell failed, for the error the caller sees. */
export function describeCell(cell: CellResult): string {
	if (cell.error) return `${cell.error.ename}: ${cell.error.evalue}`;
	return `the cell ended ${cell.status}`;
}

/** The manifest in the shape the kernel writes it (snake_case keys), as the host reads it. */
export function manifestFromPython(raw: Record<string, unknown>): StateManifest {
	return {
		format: 1,
		savedAt: String(raw.saved_at ?? ""),
		totalBytes: Number(raw.total_bytes ?? 0),
		variables: asArray(raw.variables).map((entry) => {
			const item = entry as Record<string, unknown>;
			return {
				name: String(item.name),
				file: String(item.file),
				bytes: Number(item.bytes ?? 0),
				type: String(item.type ?? ""),
				definition: item.definition === true,
			};
		}),
		imports: Object.fromEntries(
			Object.entries((raw.imports as Record<string, unknown>) ?? {}).map(([name, module]) => [name, String(module)]),
		),
		unsaveable: asArray(raw.unsaveable).map(toUnsaveable),
		...(typeof raw.entry === "string" ? { entry: raw.entry } : {}),
	};
}

/** A restore's report in the shape the kernel writes it, as the host reads it. */
export function restoreReportFromPython(raw: Record<string, unknown>): StateRestoreReport {
	return {
		restored: asArray(raw.restored).map(String),
		imports: asArray(raw.imports).map(String),
		failed: asArray(raw.failed).map((entry) => ({
			name: String((entry as Record<string, unknown>).name),
			reason: String((entry as Record<string, unknown>).reason),
		})),
		unsaveable: asArray(raw.unsaveable).map(toUnsaveable),
		...(raw.missing ? { missing: true } : {}),
		...(typeof raw.corrupt === "string" ? { corrupt: raw.corrupt } : {}),
	};
}

export function toUnsaveable(entry: unknown): UnsaveableVariable {
	const item = entry as Record<string, unknown>;
	return {
		name: String(item.name),
		...(item.type !== undefined ? { type: String(item.type) } : {}),
		reason: String(item.reason),
	};
}

export function asArray(value: unknown): unknown[] {
	return Array.isArray(value) ? value : [];
}
