import type { AgentMessage } from "@mariozechner/pi-agent-core";

/** Files the summarised part of the conversation read and changed; carried from compaction to compaction. */
export interface FileActivity {
	readFiles: string[];
	modifiedFiles: string[];
}

const STRING = String.raw`(?:[rRbBfF]{0,2})(["'])([^"'\n]+)\1`;
const OPEN_CALL = new RegExp(String.raw`\bopen\(\s*${STRING}\s*(?:,\s*(?:mode\s*=\s*)?(["'])([^"']*)\3)?`, "g");
const PATH_READ = new RegExp(String.raw`\bPath\(\s*${STRING}\s*\)\s*\.\s*read_(?:text|bytes)\b`, "g");
const PATH_WRITE = new RegExp(String.raw`\bPath\(\s*${STRING}\s*\)\s*\.\s*write_(?:text|bytes)\b`, "g");

/**
 * Collect file activity from ipython calls and results: files changed by `edit()` (the diffs in
 * the result's details), files the kernel saw a cell write (Python, `%%bash`, programs it ran;
 * `writtenFiles` in the details), and files read with `open(...)` / `Path(...)` on string literals.
 * The list is a memory aid, not an audit.
 */
export function collectFileActivity(messages: readonly AgentMessage[], previous?: FileActivity): FileActivity {
	const read = new Set(previous?.readFiles ?? []);
	const modified = new Set(previous?.modifiedFiles ?? []);
	for (const message of messages) {
		if (message.role === "assistant") {
			for (const part of message.content) {
				if (part.type !== "toolCall") continue;
				const code = (part.arguments as { code?: unknown }).code;
				if (typeof code === "string") scanCode(code, read, modified);
			}
		} else if (message.role === "toolResult") {
			const details = message.details as { diffs?: { path?: unknown }[]; writtenFiles?: unknown[] } | undefined;
			if (Array.isArray(details?.diffs))
				for (const diff of details.diffs) if (typeof diff.path === "string") modified.add(diff.path);
			if (Array.isArray(details?.writtenFiles))
				for (const path of details.writtenFiles) if (typeof path === "string") modified.add(path);
		}
	}
	for (const path of modified) read.delete(path);
	return { readFiles: [...read].sort(), modifiedFiles: [...modified].sort() };
}

function scanCode(code: string, read: Set<string>, modified: Set<string>): void {
	for (const match of code.matchAll(OPEN_CALL)) {
		const path = match[2] as string;
		const mode = match[4] ?? "r";
		if (/[wax+]/.test(mode)) modified.add(path);
		else read.add(path);
	}
	for (const match of code.matchAll(PATH_READ)) read.add(match[2] as string);
	for (const match of code.matchAll(PATH_WRITE)) modified.add(match[2] as string);
}

/** The lists as appended to a summary (and read back by the next compaction from its details). */
export function formatFileActivity(activity: FileActivity): string {
	const parts: string[] = [];
	if (activity.readFiles.length > 0) parts.push(`<read-files>\n${activity.readFiles.join("\n")}\n</read-files>`);
	if (activity.modifiedFiles.length > 0) {
		parts.push(`<modified-files>\n${activity.modifiedFiles.join("\n")}\n</modified-files>`);
	}
	return parts.join("\n\n");
}
