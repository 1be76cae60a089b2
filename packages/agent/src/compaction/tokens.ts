import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { COMPACTION_SUMMARY_TYPE, type SessionEntry } from "../session/index.js";

/** Characters per token of the estimate (a deliberate overestimate for code and English). */
const CHARS_PER_TOKEN = 4;

/** Estimated tokens of one message: every text, thinking, tool call and image counted (chars / 4). */
export function estimateTokens(message: AgentMessage): number {
	const content = (message as { content?: unknown }).content;
	let chars = 0;
	if (typeof content === "string") chars = content.length;
	else if (Array.isArray(content)) {
		for (const part of content as { type: string; text?: string; thinking?: string; arguments?: unknown }[]) {
			if (part.type === "text") chars += part.text?.length ?? 0;
			else if (part.type === "thinking") chars += part.thinking?.length ?? 0;
			else if (part.type === "toolCall") chars += JSON.stringify(part.arguments ?? {}).length + 20;
			else if (part.type === "image") chars += 4800;
		}
	}
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Estimated tokens an entry adds to the context (0 for entries the model never sees). */
export function estimateEntryTokens(entry: SessionEntry): number {
	switch (entry.type) {
		case "message":
			return estimateTokens(entry.message);
		case "custom_message":
			return estimateTokens({ role: "host", content: entry.content } as AgentMessage);
		case "branch_summary":
		case "compaction":
			return Math.ceil(entry.summary.length / CHARS_PER_TOKEN);
		default:
			return 0;
	}
}

/**
 * Tokens the context holds: the newest successful assistant message's reported usage (what the
 * provider counted for everything up to it) plus the estimate of the messages after it.
 * Without any usage, everything is estimated. After a compaction, the kept assistant messages
 * report what the provider counted before it (the whole old context): only answers newer than the
 * summary are trusted, else the compacted context would look as large as before and compact again.
 */
export function contextTokens(messages: readonly AgentMessage[]): number {
	const summary = messages.find((message) => message.role === "host" && message.customType === COMPACTION_SUMMARY_TYPE);
	const since = summary?.timestamp ?? Number.NEGATIVE_INFINITY;
	for (let index = messages.length - 1; index >= 0; index--) {
		const message = messages[index] as AgentMessage;
		if (message.role !== "assistant" || message.timestamp < since) continue;
		const usage = usageTokens(message);
		if (usage === 0) continue;
		let after = 0;
		for (let later = index + 1; later < messages.length; later++)
			after += estimateTokens(messages[later] as AgentMessage);
		return usage + after;
	}
	return messages.reduce((sum, message) => sum + estimateTokens(message), 0);
}

function usageTokens(message: AssistantMessage): number {
	if (message.stopReason === "error" || message.stopReason === "aborted") return 0;
	const usage = message.usage;
	if (!usage) return 0;
	return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}
