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
	const boundary = compactionBoundary(branch);
	if (boundary.compaction) {
		const { summary, timestamp } = boundary.compaction;
		context.messages.push(hostMessage(COMPACTION_SUMMARY_TYPE, compactionSummaryText(summary), timestamp));
	}
	for (let index = boundary.start; index < branch.length; index++) {
		if (index === boundary.compactionIndex) continue;
		const message = entryToMessage(branch[index] as SessionEntry);
		if (message) context.messages.push(message);
	}
	return context;
}

/** Where the newest compaction on a branch leaves off. */
export interface CompactionBoundary {
	/** The newest compaction entry, if any. */
	compaction?: CompactionEntry;
	/** Its index in the branch, -1 without one. */
	compactionIndex: number;
	/** First index the model still sees verbatim: the compaction's first kept entry (or what follows it). */
	start: number;
}

/** The newest compaction of `branch` and the first entry it keeps (everything before is in its summary). */
export function compactionBoundary(branch: readonly SessionEntry[]): CompactionBoundary {
	const compactionIndex = findLastIndex(branch, (entry) => entry.type === "compaction");
	if (compactionIndex < 0) return { compactionIndex, start: 0 };
	const compaction = branch[compactionIndex] as CompactionEntry;
	const kept = branch.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
	if (kept >= 0 && kept < compactionIndex) return { compaction, compactionIndex, start: kept };
	// No kept part before it (a file read from disk has one where it can, see `placement.ts`): keep
	// all the model saw verbatim before this compaction rather than lose cells.
	const before = compactionIndex > 0 ? compactionBoundary(branch.slice(0, compactionIndex)).start : 1;
	return { compaction, compactionIndex, start: before };
}

/**
 * How a compaction summary reaches the model: framed, so it reads as the record of earlier turns
 * that it replaces rather than as a new request from the user.
 */
export function compactionSummaryText(summary: string): string {
	return `The conversation before this point was compacted: the earlier turns were replaced by the summary below, written from them. The IPython kernel was not reset.\n\n<summary>\n${summary}\n</summary>`;
}

/** The message an entry contributes to the model's context; undefined for entries it never sees. */
export function entryToMessage(entry: SessionEntry): AgentMessage | undefined {
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
