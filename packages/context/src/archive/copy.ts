import { copyFile, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { ArchiveError, type SessionArchive } from "./types.js";

/**
 * Copies observations, under the same ids, from one session's archive into another's (a forked
 * session keeps its pinned ids readable). An id the target already holds is left alone. The
 * metadata is copied last, so a half-copied observation is never listed.
 */
export async function copyObservations(from: SessionArchive, to: SessionArchive, ids: string[]): Promise<string[]> {
	const copied: string[] = [];
	for (const id of ids) {
		await from.get(id); // validates the id and that the observation is complete
		const target = join(to.dir, id);
		await mkdir(to.dir, { recursive: true, mode: 0o700 });
		try {
			await mkdir(target, { mode: 0o700 });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
			throw new ArchiveError(`cannot copy ${id} into ${to.dir}: ${(error as Error).message}`, id);
		}
		try {
			await copyFile(join(from.dir, id, "output.gz"), join(target, "output.gz"));
			await copyFile(join(from.dir, id, "meta.json"), join(target, "meta.json"));
		} catch (error) {
			await rm(join(target, "output.gz"), { force: true });
			throw new ArchiveError(`cannot copy ${id} into ${to.dir}: ${(error as Error).message}`, id);
		}
		copied.push(id);
	}
	return copied;
}
