import { createHash, type Hash, randomBytes } from "node:crypto";
import {
	chmodSync,
	closeSync,
	existsSync,
	fsyncSync,
	mkdirSync,
	openSync,
	readFileSync,
	readSync,
	renameSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { HISTORY_BOUNDS, pruneStateHistory } from "./history.js";
import { STATE_ENTRIES, STATE_MANIFEST, stateManifestPath } from "./manifest.js";

/** Raw bytes per chunk: 4 MiB once in base64, well under the ~10 MB a Jupyter Server takes in one message. */
export const STATE_CHUNK_BYTES = 3 * 1024 * 1024;
/** The most a manifest sent by a kernel may hold. */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;
const VAR_FILE = /^[0-9a-f]{64}\.pkl$/;
/** The only names a kernel may read or send: exactly as `state.py` names the files of a snapshot. */
const SNAPSHOT_FILE = /^(manifest\.json|entries\/[A-Za-z0-9_-]{1,64}\.json|vars\/[0-9a-f]{64}\.pkl)$/;

/**
 * The file of the snapshot folder `dir` that `name` (as a kernel sent it) stands for. Throws for
 * any other name: the folder is trusted, the kernel's requests are not, so only `manifest.json`,
 * `entries/<entry id>.json` and `vars/<sha256>.pkl` are ever reached, never a path of the kernel's choosing.
 */
export function snapshotFilePath(dir: string, name: unknown): string {
	if (typeof name !== "string" || !SNAPSHOT_FILE.test(name)) {
		throw new Error(
			`${JSON.stringify(name)} is not a file of a state snapshot (manifest.json, entries/<id>.json or vars/<sha256>.pkl)`,
		);
	}
	return join(dir, ...name.split("/"));
}

export interface SaveLimits {
	entry?: string;
	maxVariableBytes: number;
	maxTotalBytes: number;
	maxHistoryBytes?: number;
	maxHistoryEntries?: number;
}

/** What a kernel's save committed: its manifest (as the kernel writes it) and what the host did. */
export interface CommittedSave {
	manifest: Record<string, unknown>;
	written: number;
	prunedEntries: string[];
}

interface Incoming {
	name: string;
	parts: Buffer[];
	bytes: number;
	hash: Hash;
}

/**
 * The host's side of one save into `dir` by a kernel that cannot write there: it answers the
 * kernel's requests (`want`, `put`, `commit`; see `prime_kernel/state_transfer.py`). A variable
 * file is installed only whole and matching its SHA-256 name; the manifest only at the commit, and
 * only when every file it names is there, so a kernel lost mid-transfer leaves the previous
 * snapshot whole. Sizes are bounded by the caps the host asked for.
 */
export class SaveReceiver {
	committed?: CommittedSave;
	private incoming?: Incoming;
	private manifest?: Buffer;
	private received = 0;
	private installed = 0;

	constructor(
		private readonly dir: string,
		private readonly limits: SaveLimits,
	) {}

	/** Answers one request of the kernel; throws (an error reply) for anything out of bounds. */
	answer(request: Record<string, unknown>): Record<string, unknown> {
		if (this.committed) throw new Error("this save was already committed");
		switch (request.op) {
			case "want":
				return { missing: this.missing(request.files) };
			case "put":
				// Small files come several to a request, each whole; a large one chunk by chunk.
				if (Array.isArray(request.files)) {
					for (const file of request.files as Record<string, unknown>[]) {
						this.put({ name: file?.name, data: file?.data, offset: 0, final: true });
					}
				} else this.put(request);
				return {};
			case "commit":
				this.committed = this.commit(request);
				return {};
			default:
				throw new Error(`a state save takes want, put and commit requests, not ${JSON.stringify(request.op)}`);
		}
	}

	private missing(files: unknown): string[] {
		if (!Array.isArray(files)) throw new Error("want needs the list of variable files");
		for (const file of files) snapshotFilePath(this.dir, `vars/${String(file)}`);
		return files.filter((file) => !existsSync(join(this.dir, "vars", String(file))));
	}

	private put(request: Record<string, unknown>): void {
		const { name, offset, data, final } = request;
		const path = snapshotFilePath(this.dir, name);
		if (name !== STATE_MANIFEST && !String(name).startsWith("vars/")) {
			throw new Error(`${String(name)} is written by the host at the commit, not sent`);
		}
		const chunk = Buffer.from(typeof data === "string" ? data : "", "base64");
		if (offset === 0) this.incoming = { name: String(name), parts: [], bytes: 0, hash: createHash("sha256") };
		const incoming = this.incoming;
		if (!incoming || incoming.name !== name || offset !== incoming.bytes) {
			throw new Error(`${String(name)} at offset ${String(offset)} does not continue the file being sent`);
		}
		const cap = name === STATE_MANIFEST ? MAX_MANIFEST_BYTES : this.limits.maxVariableBytes;
		this.received += chunk.length;
		if (incoming.bytes + chunk.length > cap || this.received > this.limits.maxTotalBytes + MAX_MANIFEST_BYTES) {
			this.incoming = undefined;
			throw new Error(`${String(name)} is larger than the save's caps allow`);
		}
		incoming.parts.push(chunk);
		incoming.bytes += chunk.length;
		incoming.hash.update(chunk);
		if (final !== true) return;
		this.incoming = undefined;
		const whole = Buffer.concat(incoming.parts);
		if (name === STATE_MANIFEST) {
			this.manifest = whole;
			return;
		}
		if (`${incoming.hash.digest("hex")}.pkl` !== String(name).slice("vars/".length)) {
			throw new Error(`${String(name)} does not match its checksum; it was not kept`);
		}
		privateDir(this.dir);
		privateDir(join(this.dir, "vars"));
		if (!existsSync(path)) {
			writeAtomically(path, whole, false);
			this.installed += 1;
		}
	}

	private commit(request: Record<string, unknown>): CommittedSave {
		if (!this.manifest) throw new Error("commit before the manifest was sent");
		let manifest: Record<string, unknown>;
		try {
			manifest = JSON.parse(this.manifest.toString("utf8")) as Record<string, unknown>;
		} catch (error) {
			throw new Error(`the manifest sent is not JSON (${(error as Error).message})`);
		}
		if (manifest?.format !== 1 || !Array.isArray(manifest.variables))
			throw new Error("the manifest sent has no format 1");
		for (const variable of manifest.variables as { file?: unknown }[]) {
			const file = String(variable?.file);
			if (!VAR_FILE.test(file) || !existsSync(join(this.dir, "vars", file))) {
				throw new Error(`the manifest names ${JSON.stringify(file)}, which the snapshot folder lacks`);
			}
		}
		const { entry } = this.limits;
		if (entry === undefined) delete manifest.entry;
		else manifest.entry = entry;
		const text = Buffer.from(JSON.stringify(manifest, null, 1));
		privateDir(this.dir);
		if (entry !== undefined) {
			privateDir(join(this.dir, STATE_ENTRIES));
			writeAtomically(stateManifestPath(this.dir, entry), text, true);
		}
		// Last: until now the previous snapshot is the folder's.
		writeAtomically(join(this.dir, STATE_MANIFEST), text, true);
		const prunedEntries = pruneStateHistory(
			this.dir,
			this.limits.maxHistoryBytes ?? HISTORY_BOUNDS.bytes,
			this.limits.maxHistoryEntries ?? HISTORY_BOUNDS.entries,
			entry,
		);
		manifest.duration_ms = Number(request.duration_ms ?? 0);
		return { manifest, written: this.installed, prunedEntries };
	}
}

/**
 * The host's side of one restore from `dir` into a kernel that cannot read there: it serves
 * `read` requests (a chunk of one snapshot file, by its name in the folder) and takes the `report`.
 */
export class RestoreSender {
	report?: Record<string, unknown>;
	/** The kernel's own copy of the folder (its paths appear in the report's reasons). */
	mirror?: string;

	constructor(private readonly dir: string) {}

	answer(request: Record<string, unknown>): Record<string, unknown> {
		if (request.op === "read") {
			return Array.isArray(request.names) ? this.readMany(request.names) : this.read(request.name, request.offset);
		}
		if (request.op === "report") {
			if (!request.report || typeof request.report !== "object") throw new Error("report needs the restore's report");
			this.report = request.report as Record<string, unknown>;
			this.mirror = typeof request.mirror === "string" ? request.mirror : undefined;
			return {};
		}
		throw new Error(`a state restore takes read and report requests, not ${JSON.stringify(request.op)}`);
	}

	/**
	 * Whole files, in order, while they fit in one chunk together (null for one the folder lacks);
	 * a file larger than a chunk is named in `large`, to be read chunk by chunk. The first name is
	 * always answered, so the kernel always gets on.
	 */
	private readMany(names: unknown[]): Record<string, unknown> {
		const files: Record<string, string | null> = {};
		const large: string[] = [];
		let budget = STATE_CHUNK_BYTES;
		for (const name of names) {
			const path = snapshotFilePath(this.dir, name);
			let data: Buffer;
			try {
				const size = statSync(path).size;
				if (size > STATE_CHUNK_BYTES) {
					large.push(String(name));
					continue;
				}
				if (size > budget) break;
				data = readFileSync(path);
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
				files[String(name)] = null;
				continue;
			}
			budget -= data.length;
			files[String(name)] = data.toString("base64");
		}
		return { files, large };
	}

	private read(name: unknown, offset: unknown): Record<string, unknown> {
		const path = snapshotFilePath(this.dir, name);
		const start = typeof offset === "number" && Number.isSafeInteger(offset) && offset >= 0 ? offset : -1;
		if (start < 0) throw new Error(`read needs a byte offset, not ${JSON.stringify(offset)}`);
		let fd: number;
		try {
			fd = openSync(path, "r");
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
			throw error;
		}
		try {
			const size = statSync(path).size;
			const chunk = Buffer.alloc(Math.max(0, Math.min(STATE_CHUNK_BYTES, size - start)));
			const read = readSync(fd, chunk, 0, chunk.length, start);
			return { size, data: chunk.subarray(0, read).toString("base64") };
		} finally {
			closeSync(fd);
		}
	}
}

function privateDir(path: string): void {
	mkdirSync(path, { recursive: true, mode: 0o700 });
	chmodSync(path, 0o700);
}

/** Temp file then rename (0600); `durable` syncs first (manifests: a variable file is checked by its checksum). */
function writeAtomically(path: string, data: Buffer, durable: boolean): void {
	const temp = join(dirname(path), `.tmp-${randomBytes(6).toString("hex")}.part`);
	try {
		const fd = openSync(temp, "wx", 0o600);
		try {
			writeFileSync(fd, data);
			if (durable) fsyncSync(fd);
		} finally {
			closeSync(fd);
		}
		renameSync(temp, path);
	} catch (error) {
		rmSync(temp, { force: true });
		throw error;
	}
}
