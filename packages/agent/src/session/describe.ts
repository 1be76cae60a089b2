import { messageText } from "./messages.js";
import type { Session } from "./session.js";
import type { SessionEntry } from "./types.js";

const PREVIEW_CHARS = 90;

/** The active branch of a session, one entry per line with its id, for picking `--at <entry>`. */
export function describeBranch(session: Session): string {
	const header = `Session ${session.id}  ${session.cwd}\n${session.path}\n`;
	const lines = session.branch().map((entry) => `${entry.id}  ${entryLabel(entry)}`);
	const others = session.entries.length - lines.length;
	const footer = others > 0 ? `(${others} more entries on other branches)\n` : "";
	return `${header}\n${lines.join("\n")}\n${footer}`;
}

/** One line for an entry: its kind, then a preview (`sessions <id>`, the replay of `attach`). */
export function entryLabel(entry: SessionEntry): string {
	switch (entry.type) {
		case "message": {
			const message = entry.message;
			if (message.role === "assistant") {
				const calls = message.content.filter((part) => part.type === "toolCall").length;
				const text = oneLine(messageText(message));
				return `assistant  ${text}${calls > 0 ? `${text ? " " : ""}[${calls} cell${calls > 1 ? "s" : ""}]` : ""}`;
			}
			if (message.role === "toolResult")
				return `result     ${message.isError ? "(error) " : ""}${oneLine(messageText(message))}`;
			return `${message.role.padEnd(10)} ${oneLine(messageText(message))}`;
		}
		case "model_change":
			return `model      ${entry.provider}/${entry.modelId}`;
		case "thinking_level_change":
			return `thinking   ${entry.thinkingLevel}`;
		case "compaction":
			return `compaction ${oneLine(entry.summary)}`;
		case "branch_summary":
			return `branch     ${oneLine(entry.summary)}`;
		case "custom":
			return `custom     ${entry.customType}`;
		case "custom_message":
			return `note       ${entry.customType}`;
	}
}

function oneLine(text: string): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat;
}
