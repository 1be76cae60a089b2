import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { ImageContent, Message, TextContent } from "@mariozechner/pi-ai";

/**
 * Messages the host adds to the conversation that the model API has no role for: injected notes
 * (custom messages), compaction and branch summaries. They reach the model as user messages.
 */
export interface HostMessage {
	role: "host";
	customType: string;
	content: string | (TextContent | ImageContent)[];
	display: boolean;
	details?: unknown;
	timestamp: number;
}

declare module "@mariozechner/pi-agent-core" {
	interface CustomAgentMessages {
		host: HostMessage;
	}
}

/**
 * The single conversion from our messages to the wire type (the loop's `convertToLlm`). A host
 * message goes with timestamp 0: the copy a run holds is stamped when it is made and the session
 * entry when it is written, so a resumed session would otherwise send different bytes for it.
 */
export function toLlmMessages(messages: AgentMessage[]): Message[] {
	const out: Message[] = [];
	for (const message of messages) {
		if (message.role === "host") {
			out.push({ role: "user", content: message.content, timestamp: 0 });
		} else if (message.role === "user" || message.role === "assistant" || message.role === "toolResult") {
			out.push(message);
		}
	}
	return out;
}

/** Plain text of a message's text parts (for previews and listings). */
export function messageText(message: AgentMessage): string {
	const content = (message as { content?: unknown }).content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((part): part is TextContent => part?.type === "text")
		.map((part) => part.text)
		.join("");
}
