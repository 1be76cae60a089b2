import { serializeConversation } from "../compaction/index.js";
import { entryToMessage, type SessionEntry } from "../session/index.js";

/**
 * The branch as text for the refinement calls, oldest first: every message, including those a
 * compaction has since replaced by its summary (the calls take the newest characters).
 */
export function trajectoryText(branch: readonly SessionEntry[]): string {
	const messages = [];
	for (const entry of branch) {
		const message = entryToMessage(entry);
		if (message) messages.push(message);
	}
	return serializeConversation(messages);
}

/** The newest user prompt on the branch (what the index ranks entries against), or "". */
export function latestUserText(branch: readonly SessionEntry[]): string {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index];
		if (entry?.type !== "message" || entry.message.role !== "user") continue;
		const content = entry.message.content;
		return typeof content === "string"
			? content
			: content.map((part) => (part.type === "text" ? part.text : "")).join("");
	}
	return "";
}
