import type { Component } from "@mariozechner/pi-tui";
import type { Session, SessionEvent } from "prime-agent";
import { type CellOptions, CellView } from "./components/cell.js";
import { AssistantView, NoteView, UserView } from "./components/messages.js";

/** A message of the conversation, as the session holds it. */
export type AgentMessage = ReturnType<Session["context"]>["messages"][number];

/** Text parts of a message's content, joined. */
export function contentText(content: unknown, type: "text" | "thinking" = "text"): string {
	if (typeof content === "string") return type === "text" ? content : "";
	if (!Array.isArray(content)) return "";
	return content
		.map((part: { type?: string; text?: string; thinking?: string }) =>
			part.type === type ? ((type === "text" ? part.text : part.thinking) ?? "") : "",
		)
		.join("");
}

/**
 * Lay out a conversation already in the session (a resumed session, or the branch `/tree` moved
 * to): what the user sent, the answers, and each cell with its result, as they looked live.
 * Returns the cells whose result has not come, by tool call id (still running, or stopped there).
 */
export function addHistory(
	add: (block: Component) => void,
	messages: readonly AgentMessage[],
	cellOptions: Omit<CellOptions, "toolName" | "args">,
): Map<string, CellView> {
	const cells = new Map<string, CellView>();
	for (const message of messages) {
		const role = (message as { role: string }).role;
		if (role === "user") add(new UserView(contentText((message as { content: unknown }).content)));
		else if (role === "assistant" && message.role === "assistant") {
			const view = new AssistantView();
			view.setContent(contentText(message.content), contentText(message.content, "thinking"));
			if (message.stopReason === "error" && message.errorMessage) view.setError(message.errorMessage);
			add(view);
			for (const part of message.content) {
				if (part.type !== "toolCall") continue;
				const cell = new CellView({
					...cellOptions,
					toolName: part.name,
					args: part.arguments,
					startedAt: message.timestamp,
				});
				cells.set(part.id, cell);
				add(cell);
			}
		} else if (role === "toolResult" && message.role === "toolResult") {
			cells.get(message.toolCallId)?.finish(contentText(message.content), message.isError, message.details);
			cells.delete(message.toolCallId);
		} else if (message.role === "host" && /summary$/.test(message.customType)) {
			add(new NoteView(`[${message.customType.replace("_", " ")}: the earlier conversation is summarised here]`));
		}
	}
	return cells;
}

/** What tells one message of the conversation from another: its role, time and text. */
function messageKey(message: { role?: string; timestamp?: number; content?: unknown }): string {
	return `${message.role}:${message.timestamp}:${contentText(message.content)}`;
}

/**
 * Of the events that came while `messages` (the history) were read, those the history does not
 * hold already: a message or a cell it holds is not drawn twice.
 */
export function notInHistory(events: readonly SessionEvent[], messages: readonly AgentMessage[]): SessionEvent[] {
	const known = new Set(messages.map((message) => messageKey(message)));
	const calls = new Set(
		messages.flatMap((message) =>
			message.role === "assistant"
				? message.content.flatMap((part) => (part.type === "toolCall" ? [part.id] : []))
				: [],
		),
	);
	return events.filter((event) => {
		const message =
			event.type === "message_start" || event.type === "message_update" || event.type === "message_end"
				? event.message
				: undefined;
		if (message && known.has(messageKey(message))) return false;
		return !(event.type === "tool_execution_start" && calls.has(event.toolCallId));
	});
}
