/**
 * Writes the file system refused: a full disk, a used-up quota, a read-only mount, a missing
 * permission, a file-size limit. Such an error is ours to explain (the disk and the path, what to
 * do), never the model's or the provider's.
 */
import {
	chmodSync,
	type Dirent,
	existsSync,
	readdirSync,
	readFileSync,
	realpathSync,
	renameSync,
	rmSync,
	statfsSync,
	writeFileSync,
} from "node:fs";
import { dirname, join, sep } from "node:path";
import { ExitCode, UserError } from "../errors.js";

/** The error codes with which a file system refuses a write, in the words the message uses. */
const REFUSALS: Record<string, string> = {
	ENOSPC: "No space left",
	EDQUOT: "The disk quota is used up",
	EFBIG: "The file size limit (ulimit -f) was reached",
	EROFS: "The file system is read-only",
	EACCES: "Permission denied",
	EPERM: "Permission denied",
};

/** A write the disk refused: `path` the file, `code` the errno code. The hint says what to do. */
export class DiskWriteError extends UserError {
	constructor(
		message: string,
		hint: string,
		readonly code: string,
		readonly path: string,
	) {
		super(message, hint, ExitCode.disk);
		this.name = "DiskWriteError";
	}
}

/** Whether `error` is a write the file system refused (by its errno code). */
export function isDiskRefusal(error: unknown): boolean {
	if (error instanceof DiskWriteError) return true;
	const code = (error as NodeJS.ErrnoException | undefined)?.code;
	return typeof code === "string" && Object.hasOwn(REFUSALS, code);
}

/**
 * `error` as a `DiskWriteError` naming `path`, its disk (mount point, free space) and what to do,
 * ending with `then` ("resume it with ..."); undefined when `error` is no refused write.
 */
export function diskWriteError(error: unknown, path: string, then?: string): DiskWriteError | undefined {
	// Already explained: kept, or told again with another way to go on.
	if (error instanceof DiskWriteError)
		return then === undefined ? error : diskWriteError({ code: error.code }, error.path, then);
	if (!isDiskRefusal(error)) return undefined;
	const code = (error as NodeJS.ErrnoException).code as string;
	const disk = diskOf(path);
	const about = [disk.type, disk.free === undefined ? undefined : `${formatBytes(disk.free)} free`].filter(Boolean);
	const where = `${disk.mount ?? dirname(path)}${about.length > 0 ? ` (${about.join(", ")})` : ""}`;
	const message =
		code === "ENOSPC" || code === "EDQUOT"
			? `${REFUSALS[code]} on ${where}: ${path} could not be written.`
			: `${REFUSALS[code]}: ${path} could not be written (on ${where}).`;
	const mount = disk.mount ?? dirname(path);
	const hint: Record<string, string> = {
		ENOSPC: `Free space on ${mount}`,
		EDQUOT: `Free space on ${mount} or raise your quota`,
		EFBIG: "Raise the file size limit (`ulimit -f`)",
		EROFS: `Mount ${mount} writable, or point PRIME_AGENT_DIR at another disk`,
		EACCES: `Give your user write access to ${dirname(path)}`,
		EPERM: `Give your user write access to ${dirname(path)}`,
	};
	return new DiskWriteError(message, `${hint[code]}, then ${then ?? "try again"}.`, code, path);
}

/** Run `write` (a write of `path`); a refused write is thrown as a `DiskWriteError` (see `diskWriteError`). */
export function writingTo<T>(path: string, write: () => T, then?: string): T {
	try {
		return write();
	} catch (error) {
		throw diskWriteError(error, path, then) ?? error;
	}
}

/** The mount point and file system type holding `path` (Linux), and the bytes free to the user there. */
export function diskOf(path: string): { mount?: string; type?: string; free?: number } {
	let existing = path;
	while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
	let real = existing;
	try {
		real = realpathSync(existing);
	} catch {}
	let free: number | undefined;
	try {
		const stats = statfsSync(real);
		free = stats.bavail * stats.bsize;
	} catch {}
	return { ...mountOf(real), free };
}

function mountOf(real: string): { mount?: string; type?: string } {
	let table: string;
	try {
		table = readFileSync("/proc/self/mountinfo", "utf8");
	} catch {
		return {};
	}
	let best: { mount?: string; type?: string } = {};
	for (const line of table.split("\n")) {
		const [left, right] = line.split(" - ");
		const mount = left
			?.split(" ")[4]
			?.replace(/\\(\d{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
		if (!mount || !right) continue;
		const inside = real === mount || real.startsWith(mount.endsWith(sep) ? mount : `${mount}${sep}`);
		// The longest mount point holding the path is its file system (later lines win ties: mounted over).
		if (inside && mount.length >= (best.mount?.length ?? 0)) best = { mount, type: right.split(" ")[0] };
	}
	return best;
}

/** Bytes for a message: "0 bytes", "12 KB", "1.5 MB". */
export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} bytes`;
	const units = ["KB", "MB", "GB", "TB"];
	let value = bytes / 1024;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit++;
	}
	return `${value < 10 ? value.toFixed(1).replace(/\.0$/, "") : Math.round(value)} ${units[unit]}`;
}

/** A temp file of an atomic write: `<file>.<pid>.tmp`, or `<file>.<pid>.<8 hex>.tmp` (Prime Context's). */
const TEMP_FILE = /\.(\d+)(?:\.[0-9a-f]{8})?\.tmp$/;

/**
 * Write `text` to a temp file beside `path`, then rename it into place (readers never see half a
 * file). A failed write removes its temp file and is thrown as a `DiskWriteError` when the disk
 * refused it.
 */
export function writeFileAtomically(path: string, text: string, mode: number, then?: string): void {
	const temp = `${path}.${process.pid}.tmp`;
	writingTo(
		path,
		() => {
			try {
				writeFileSync(temp, text, { mode });
				// An existing temp file (a dead process's, the pid reused) keeps its mode: set it.
				chmodSync(temp, mode);
				renameSync(temp, path);
			} catch (error) {
				try {
					rmSync(temp, { force: true });
				} catch {
					// Not a file of ours (a folder in its way): the write's own failure is the one to report.
				}
				throw error;
			}
		},
		then,
	);
}

/**
 * Remove the temp files of atomic writes in `dir` (and `depth` levels of folders below) left by a
 * process that was killed mid-write: only those whose process (the pid in the name) is gone, so a
 * write under way is never touched. Returns how many were removed. Never throws.
 */
export function removeLeftoverTempFiles(dir: string, depth = 0): number {
	let removed = 0;
	let names: Dirent[];
	try {
		names = readdirSync(dir, { withFileTypes: true });
	} catch {
		return 0;
	}
	for (const entry of names) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) {
			if (depth > 0) removed += removeLeftoverTempFiles(path, depth - 1);
			continue;
		}
		const pid = TEMP_FILE.exec(entry.name)?.[1];
		if (!entry.isFile() || pid === undefined || processAlive(Number(pid))) continue;
		try {
			rmSync(path, { force: true });
			removed++;
		} catch {}
	}
	return removed;
}

function processAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		// EPERM: alive, another user's.
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
}

/**
 * Whether a small file can be written beside `path` now: the disk's refusal (as for a write of
 * `path`), or undefined when it can. Used to explain a process that died without saying why.
 */
export function probeWrite(path: string, then?: string): DiskWriteError | undefined {
	const temp = `${path}.${process.pid}.tmp`;
	try {
		writeFileSync(temp, "probe\n".repeat(100), { mode: 0o600 });
		return undefined;
	} catch (error) {
		return diskWriteError(error, path, then);
	} finally {
		try {
			rmSync(temp, { force: true });
		} catch {}
	}
}
