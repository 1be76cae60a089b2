import { createHash, type Hash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";

/** Folders left out of a tree's hash: caches Python and git write themselves, never code of the project. */
const SKIPPED_DIRS = new Set(["__pycache__", ".git"]);

/** SHA-256 of a file's bytes (hex); `missing` when it cannot be read. */
export function hashFile(path: string): string {
	try {
		return createHash("sha256").update(readFileSync(path)).digest("hex");
	} catch {
		return "missing";
	}
}

/**
 * SHA-256 over every file under `path` (a file or a folder): each file's path relative to `path`,
 * its bytes, and each symbolic link's target, in sorted order, so a renamed, added, removed or
 * edited file changes the hash. Links to folders are followed once (what `import` would read).
 */
export function hashTree(path: string): string {
	const hash = createHash("sha256");
	addTree(hash, path, "", new Set());
	return hash.digest("hex");
}

function addTree(hash: Hash, path: string, relative: string, seen: Set<string>): void {
	let stat: ReturnType<typeof lstatSync>;
	try {
		stat = lstatSync(path);
	} catch {
		hash.update(`missing ${relative}\0`);
		return;
	}
	if (stat.isSymbolicLink()) {
		hash.update(`link ${relative} ${readlinkSync(path)}\0`);
		if (!isDirectory(path)) {
			hash.update(`file ${relative}\0`).update(hashFile(path));
			return;
		}
	} else if (stat.isFile()) {
		hash.update(`file ${relative}\0`).update(readFileSync(path));
		return;
	} else if (!stat.isDirectory()) return;
	const real = realpathSync(path);
	if (seen.has(real)) return;
	seen.add(real);
	hash.update(`dir ${relative}\0`);
	for (const name of readdirSync(path).sort()) {
		if (SKIPPED_DIRS.has(name)) continue;
		addTree(hash, join(path, name), relative === "" ? name : `${relative}/${name}`, seen);
	}
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}
