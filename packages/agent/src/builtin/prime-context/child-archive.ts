import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/**
 * The session id of the sub-agent `name` of the session in `sessionFile`: its file is
 * `<artifact folder>/sub-xxxxxxxx/<id>.jsonl`, whose header names it (`rlmChild.name`). Undefined
 * when no saved child session has that name.
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
	for (const folder of folders) {
		let files: string[];
		try {
			files = (await readdir(join(artifactDir, folder))).filter((file) => file.endsWith(".jsonl"));
		} catch {
			continue;
		}
		for (const file of files) {
			try {
				const header = JSON.parse(
					(await readFile(join(artifactDir, folder, file), "utf8")).split("\n", 1)[0] ?? "",
				) as {
					id?: unknown;
					rlmChild?: { name?: unknown };
				};
				if (header.rlmChild?.name === name && typeof header.id === "string") return header.id;
			} catch {
				// Not a readable session file: skip it.
			}
		}
	}
	return undefined;
}
