import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** File names read as project context, in order of preference within one directory. */
export const CONTEXT_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"];

/** A context file is cut here, so one oversized file cannot fill the model's context. */
export const CONTEXT_FILE_MAX_CHARS = 32_768;

/**
 * Project context files for `cwd`: the global one in the agent home first, then one per directory
 * from the filesystem root down to `cwd` (so the nearest file is read last and wins on conflicts).
 */
export function findContextFiles(cwd: string, agentHome?: string): { path: string; content: string }[] {
	const found: { path: string; content: string }[] = [];
	const readFirst = (dir: string) => {
		for (const name of CONTEXT_FILE_NAMES) {
			const path = join(dir, name);
			if (existsSync(path)) {
				try {
					const content = readFileSync(path, "utf8");
					found.push({
						path,
						content:
							content.length > CONTEXT_FILE_MAX_CHARS
								? `${content.slice(0, CONTEXT_FILE_MAX_CHARS)}\n[... cut at ${CONTEXT_FILE_MAX_CHARS} characters; read ${path} for the rest]`
								: content,
					});
				} catch {
					// An unreadable file (permissions, a directory by that name) is simply not context.
				}
				return;
			}
		}
	};
	if (agentHome) readFirst(agentHome);
	const chain: string[] = [];
	let dir = resolve(cwd);
	for (;;) {
		chain.push(dir);
		const parent = dirname(dir);
		if (parent === dir) break;
		dir = parent;
	}
	for (const each of chain.reverse()) readFirst(each);
	return found;
}
