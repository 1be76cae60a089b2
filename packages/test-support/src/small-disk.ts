import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, cpSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A real small file system for full-disk tests: a tmpfs mounted over a folder. Mounting needs root
 * (CI runs as root); `cannotMount` says why it cannot be done here, for `describe.skipIf`.
 */
export const cannotMount: string | undefined = mountCheck();

function mountCheck(): string | undefined {
	if (process.getuid?.() !== 0) return "full-disk tests mount a tmpfs, which needs root";
	const dir = mkdtempSync(join(tmpdir(), "prime-mount-check-"));
	try {
		const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { encoding: "utf8" });
		if (mounted.status !== 0) return `a tmpfs cannot be mounted here: ${mounted.stderr.trim() || mounted.error}`;
		spawnSync("umount", [dir]);
		return undefined;
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

export interface SmallDisk {
	/** The mount point. */
	dir: string;
	/** Fill the disk to the last byte (a file `filler` in it). */
	fill(): void;
	/** Fill all but `bytes` (rounded to the file system's pages). */
	fillLeaving(bytes: number): void;
	/** Bytes free now. */
	freeBytes(): number;
	/** Remove the filler: space returns. */
	free(): void;
	/** Unmount (lazily: a process still inside does not stop it). Never throws. */
	unmount(): void;
}

/** Mount a tmpfs of `size` over `dir`, keeping the files already there (copied in). */
export function mountSmallDisk(dir: string, size = "2m"): SmallDisk {
	const saved = mkdtempSync(join(tmpdir(), "prime-small-disk-"));
	cpSync(dir, saved, { recursive: true });
	execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=700`, "tmpfs", dir]);
	for (const name of readdirSync(saved)) cpSync(join(saved, name), join(dir, name), { recursive: true });
	rmSync(saved, { recursive: true, force: true });
	const filler = join(dir, "filler");
	const freeBytes = () => {
		const stats = statfsSync(dir);
		return stats.bavail * stats.bsize;
	};
	const fillLeaving = (bytes: number) => {
		const fd = openSync(filler, "a");
		try {
			const page = Buffer.alloc(4096, 0x2e);
			while (freeBytes() > bytes) writeSync(fd, page, 0, Math.min(page.length, freeBytes() - bytes));
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
		} finally {
			closeSync(fd);
		}
	};
	return {
		dir,
		fill: () => {
			fillLeaving(0);
			// The last page a write may still squeeze into.
			const fd = openSync(filler, "a");
			try {
				for (;;) writeSync(fd, Buffer.from("."));
			} catch {
			} finally {
				closeSync(fd);
			}
		},
		fillLeaving,
		freeBytes,
		free: () => rmSync(filler, { force: true }),
		unmount: () => {
			spawnSync("umount", ["-l", dir]);
		},
	};
}

/** Every `*.tmp` file under `dir` (relative paths). */
export function tempFilesUnder(dir: string): string[] {
	return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith(".tmp"));
}
