import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { STATE_ENTRIES, STATE_MANIFEST } from "./manifest.js";

/** The history's default bounds (as `state.py` has them). */
export const HISTORY_BOUNDS = { bytes: 256 * 1024 * 1024, entries: 1000 } as const;

/**
 * Removes the variable files no manifest names: at once while no entry manifest is kept, else only
 * once the history passes a bound, after dropping its oldest entry manifests (and their seals)
 * until the files of those kept fit in half the bound. Returns the entries dropped. The same rule
 * as `_collect_garbage` in `state.py`, for a snapshot folder the kernel cannot reach (a kernel on
 * another machine): the host's folder is pruned by the host.
 */
export function pruneStateHistory(dir: string, maxBytes: number, maxEntries: number, keepEntry?: string): string[] {
	const varsDir = join(dir, "vars");
	const entriesDir = join(dir, STATE_ENTRIES);
	const sizes = new Map<string, number>();
	for (const item of list(varsDir)) {
		if (item.isFile()) sizes.set(item.name, statSync(join(varsDir, item.name)).size);
	}
	const entries = list(entriesDir)
		.filter((item) => item.isFile() && item.name.endsWith(".json"))
		.map((item) => ({ name: item.name.slice(0, -".json".length), path: join(entriesDir, item.name) }));
	const total = [...sizes.values()].reduce((sum, size) => sum + size, 0);
	if (entries.length > 0 && total <= maxBytes && entries.length <= maxEntries) return [];
	let keep = manifestFiles(join(dir, STATE_MANIFEST));
	const dropped: string[] = [];
	// Newest first: a manifest is kept while the files of those kept fit in half the bound.
	const ordered = entries
		.map((entry) => ({ ...entry, mtime: statSync(entry.path, { bigint: true }).mtimeNs }))
		.sort((a, b) => (a.mtime === b.mtime ? 0 : a.mtime < b.mtime ? 1 : -1));
	ordered.forEach((entry, index) => {
		const grown = new Set([...keep, ...manifestFiles(entry.path)]);
		const grownBytes = [...grown].reduce((sum, file) => sum + (sizes.get(file) ?? 0), 0);
		const fits = grownBytes <= Math.floor(maxBytes / 2) && index < Math.max(1, Math.floor(maxEntries / 2));
		if (fits || entry.name === keepEntry) {
			keep = grown;
			return;
		}
		rmSync(entry.path, { force: true });
		rmSync(join(entriesDir, `${entry.name}.seal`), { force: true });
		dropped.push(entry.name);
	});
	for (const name of sizes.keys()) {
		if (!keep.has(name)) rmSync(join(varsDir, name), { force: true });
	}
	return dropped;
}

/** The variable files a manifest names; an unreadable manifest names none (its restore reports it). */
function manifestFiles(path: string): Set<string> {
	try {
		const raw = JSON.parse(readFileSync(path, "utf8")) as { variables?: { file?: unknown }[] };
		return new Set((raw.variables ?? []).map((variable) => String(variable.file)));
	} catch {
		return new Set();
	}
}

function list(folder: string) {
	try {
		return readdirSync(folder, { withFileTypes: true });
	} catch {
		return [];
	}
}
