import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";

/** Outside git: at most this many files are walked (then the tree counts as changed every time). */
export const WALK_MAX_FILES = 20_000;
/** Outside git: files up to this size are hashed by content; larger ones by size and mtime. */
export const WALK_HASH_MAX_BYTES = 1024 * 1024;
/** Outside git: tool and dependency folders that are not the work. */
const SKIPPED_DIRS = new Set([".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"]);
/** The tree git uses for "no commit yet". */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/**
 * A digest of the workspace's state, equal for equal states. In a git work tree: `git status
 * --porcelain -z -uall`, `git diff --binary HEAD` (the empty tree before the first commit) and the
 * SHA-256 of every untracked file. Elsewhere: a bounded walk of the working tree (skipping `.git`,
 * `node_modules`, virtual environments), hashing contents; a tree too large to walk gets a digest
 * that never repeats, so nothing is wrongly taken as unchanged.
 */
export async function workspaceFingerprint(cwd: string): Promise<{ digest: string; method: "git" | "walk" }> {
	const root = await gitRoot(cwd);
	if (root) return { digest: await gitFingerprint(root), method: "git" };
	return { digest: await walkFingerprint(cwd), method: "walk" };
}

function git(args: string[], cwd: string): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		execFile("git", args, { cwd, encoding: "buffer", maxBuffer: 1024 * 1024 * 1024 }, (error, stdout) => {
			if (error) reject(error);
			else resolve(stdout);
		});
	});
}

async function gitRoot(cwd: string): Promise<string | undefined> {
	try {
		const inside = (await git(["rev-parse", "--is-inside-work-tree"], cwd)).toString().trim();
		if (inside !== "true") return undefined;
		return (await git(["rev-parse", "--show-toplevel"], cwd)).toString().trim();
	} catch {
		return undefined;
	}
}

async function gitFingerprint(root: string): Promise<string> {
	const hash = createHash("sha256");
	const status = await git(["status", "--porcelain", "-z", "-uall"], root);
	hash.update("status\0").update(status);
	const base = await git(["rev-parse", "--verify", "--quiet", "HEAD"], root)
		.then(() => "HEAD")
		.catch(() => EMPTY_TREE);
	hash.update("\0diff\0").update(await git(["diff", "--binary", base], root));
	// Untracked files: their content, since neither status nor diff shows it.
	const records = status.toString("utf8").split("\0");
	for (const record of records) {
		if (!record.startsWith("?? ")) continue;
		const path = record.slice(3);
		hash.update(`\0untracked\0${path}\0`).update(await fileDigest(join(root, path)));
	}
	return hash.digest("hex");
}

/**
 * An untracked path's digest: a regular file by its content, a symbolic link by its target (as git
 * records it; reading through it could block on a FIFO or never end on /dev/zero), anything else
 * (a FIFO, a socket, a device) by its kind alone.
 */
async function fileDigest(path: string): Promise<string> {
	const info = await lstat(path).catch((error: NodeJS.ErrnoException) => error.code ?? "?");
	if (typeof info === "string") return `unreadable:${info}`;
	if (info.isSymbolicLink()) return `link:${await readlink(path).catch(() => "?")}`;
	if (!info.isFile()) return "special";
	return contentDigest(path);
}

function contentDigest(path: string): Promise<string> {
	return new Promise((resolve) => {
		const hash = createHash("sha256");
		const stream = createReadStream(path);
		stream.on("data", (chunk) => hash.update(chunk));
		stream.on("end", () => resolve(hash.digest("hex")));
		// Gone or unreadable since git listed it: that is a state of its own.
		stream.on("error", (error) => resolve(`unreadable:${(error as NodeJS.ErrnoException).code ?? "?"}`));
	});
}

async function walkFingerprint(root: string): Promise<string> {
	const hash = createHash("sha256");
	let files = 0;
	const walk = async (dir: string, relative: string): Promise<boolean> => {
		let names: string[];
		try {
			names = (await readdir(dir)).sort();
		} catch {
			return true;
		}
		for (const name of names) {
			const path = join(dir, name);
			const rel = relative ? `${relative}/${name}` : name;
			const info = await lstat(path).catch(() => undefined);
			if (!info) continue;
			if (info.isDirectory()) {
				if (SKIPPED_DIRS.has(name) || (await isVirtualEnv(path))) continue;
				if (!(await walk(path, rel))) return false;
				continue;
			}
			if (++files > WALK_MAX_FILES) return false;
			hash.update(`${rel}\0${info.size}\0`);
			if (info.isSymbolicLink()) hash.update(`link:${await readlink(path).catch(() => "?")}`);
			else if (info.isFile() && info.size <= WALK_HASH_MAX_BYTES)
				hash.update(await readFile(path).catch(() => Buffer.from("unreadable")));
			else hash.update(String(info.mtimeMs));
			hash.update("\0");
		}
		return true;
	};
	const complete = await walk(root, "");
	return complete ? hash.digest("hex") : `too-large-${randomBytes(8).toString("hex")}`;
}

async function isVirtualEnv(dir: string): Promise<boolean> {
	return (await lstat(join(dir, "pyvenv.cfg")).catch(() => undefined)) !== undefined;
}
