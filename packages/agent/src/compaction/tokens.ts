import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { COMPACTION_SUMMARY_TYPE, type SessionEntry } from "../session/index.js";

/** Characters per token of the estimate (a deliberate overestimate for code and English). */
const CHARS_PER_TOKEN = 4;

/** What a request sends of a tool. */
export interface ToolDefinition {
	name: string;
	description?: string;
	parameters?: unknown;
}

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
	return measuredTokens(messages) ?? messages.reduce((sum, message) => sum + estimateTokens(message), 0);
}

/**
 * Tokens one request holds: as `contextTokens` when a provider counted them (its count covers the
 * system prompt and tool definitions it was sent); else the estimate of the messages, the system
 * prompt and the tool definitions.
 */
export function requestTokens(
	messages: readonly AgentMessage[],
	systemPrompt: string,
	tools: readonly ToolDefinition[] = [],
): number {
	const measured = measuredTokens(messages);
	if (measured !== undefined) return measured;
	// Only what a provider is sent of a tool (its other fields may hold anything, even cycles).
	const definitions = JSON.stringify(
		tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
	);
	const overhead = Math.ceil((systemPrompt.length + definitions.length) / CHARS_PER_TOKEN);
	return overhead + messages.reduce((sum, message) => sum + estimateTokens(message), 0);
}

/** The newest trusted usage plus the estimate of what follows it; undefined when no answer reported usage. */
function measuredTokens(messages: readonly AgentMessage[]): number | undefined {
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
	return undefined;
}

function usageTokens(message: AssistantMessage): number {
	if (message.stopReason === "error" || message.stopReason === "aborted") return 0;
	const usage = message.usage;
	if (!usage) return 0;
	return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}
