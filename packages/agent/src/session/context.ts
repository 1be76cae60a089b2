import type { AgentMessage, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { HostMessage } from "./messages.js";
import type { CompactionEntry, SessionEntry } from "./types.js";

/** What the model sees when a session continues: rebuilt from the active branch only. */
export interface SessionContext {
	messages: AgentMessage[];
	/** Last model recorded on the branch (model change or assistant message). */
	model?: { provider: string; modelId: string };
	thinkingLevel?: ThinkingLevel;
}

export const COMPACTION_SUMMARY_TYPE = "compaction_summary";
export const BRANCH_SUMMARY_TYPE = "branch_summary";

/**
 * Rebuild the model context from a branch (root first). The newest compaction on the branch
 * replaces everything before its `firstKeptEntryId`; custom entries are never included.
 */
export function buildSessionContext(branch: readonly SessionEntry[]): SessionContext {
	const context: SessionContext = { messages: [] };
	for (const entry of branch) {
		if (entry.type === "model_change") context.model = { provider: entry.provider, modelId: entry.modelId };
		if (entry.type === "thinking_level_change") context.thinkingLevel = entry.thinkingLevel;
		if (entry.type === "message" && entry.message.role === "assistant") {
			context.model = { provider: entry.message.provider, modelId: entry.message.model };
		}
	}
	let start = 0;
	const compactionIndex = findLastIndex(branch, (entry) => entry.type === "compaction");
	if (compactionIndex >= 0) {
		const compaction = branch[compactionIndex] as CompactionEntry;
		context.messages.push(hostMessage(COMPACTION_SUMMARY_TYPE, compaction.summary, compaction.timestamp));
		const kept = branch.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
		start = kept >= 0 && kept < compactionIndex ? kept : compactionIndex + 1;
	}
	for (let index = start; index < branch.length; index++) {
		const entry = branch[index] as SessionEntry;
		if (index === compactionIndex) continue;
		const message = entryMessage(entry);
		if (message) context.messages.push(message);
	}
	return context;
}

function entryMessage(entry: SessionEntry): AgentMessage | undefined {
	switch (entry.type) {
		case "message":
			return entry.message;
		case "custom_message":
			return {
				role: "host",
				customType: entry.customType,
				content: entry.content,
				display: entry.display,
				details: entry.details,
				timestamp: Date.parse(entry.timestamp),
			};
		case "branch_summary":
			return hostMessage(BRANCH_SUMMARY_TYPE, entry.summary, entry.timestamp);
		default:
			return undefined;
	}
}

function hostMessage(customType: string, text: string, timestamp: string): HostMessage {
	return { role: "host", customType, content: text, display: false, timestamp: Date.parse(timestamp) };
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
	for (let index = items.length - 1; index >= 0; index--) if (test(items[index] as T)) return index;
	return -1;
}
