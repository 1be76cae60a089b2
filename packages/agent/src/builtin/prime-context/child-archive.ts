import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * The session id of the sub-agent `name` of the session in `sessionFile`: its file is
 * `<artifact folder>/sub-xxxxxxxx/<id>.jsonl`, whose header names it (`rlmChild.name`). A name
 * freed by `rlm.delete_subagent` may be taken again: the newest child of that name (its header's
 * time, then its file's) is the current one. Undefined when no saved child session has that name.
 */
export async function childSessionId(
	sessionFile: string,
	sessionId: string,
	name: string,
): Promise<string | undefined> {
	const artifactDir = join(dirname(sessionFile), sessionId);
	let folders: string[];
	try {
		folders = (await readdir(artifactDir)).filter((folder) => folder.startsWith("sub-"));
	} catch {
		return undefined;
	}
	let newest: { id: string; timestamp: string; mtime: number } | undefined;
	for (const folder of folders) {
		let files: string[];
		try {
			files = (await readdir(join(artifactDir, folder))).filter((file) => file.endsWith(".jsonl"));
		} catch {
			continue;
		}
		for (const file of files) {
			const path = join(artifactDir, folder, file);
			try {
				const header = JSON.parse((await readFile(path, "utf8")).split("\n", 1)[0] ?? "") as {
					id?: unknown;
					timestamp?: unknown;
					rlmChild?: { name?: unknown };
				};
				if (header.rlmChild?.name !== name || typeof header.id !== "string") continue;
				const found = {
					id: header.id,
					timestamp: typeof header.timestamp === "string" ? header.timestamp : "",
					mtime: (await stat(path)).mtimeMs,
				};
				if (
					!newest ||
					found.timestamp > newest.timestamp ||
					(found.timestamp === newest.timestamp && found.mtime > newest.mtime)
				)
					newest = found;
			} catch {
				// Not a readable session file: skip it.
			}
		}
	}
	return newest?.id;
}
