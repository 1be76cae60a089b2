import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { HiddenMessage } from "../extensions/index.js";
import type { Session } from "../session/index.js";
import { unknownToolText } from "../tools/index.js";

/**
 * Record one message the loop finished in the session: a host message as a `custom_message`
 * entry, any other as a `message`. A failed call of a tool not among `tools` gets a result that
 * names the tools there are.
 */
export function recordMessage(session: Session, message: AgentMessage, tools: readonly string[]): void {
	if (message.role === "toolResult" && message.isError && !tools.includes(message.toolName)) {
		// The loop answers a call of a tool that does not exist with a bare "Tool bash not found".
		// Replaced in place: the loop sends this same message on its next call, and the transcript keeps it.
		message.content = [{ type: "text", text: unknownToolText(message.toolName, tools) }];
	}
	if (message.role === "host") {
		const { customType, content, display, details } = message;
		session.append({
			type: "custom_message",
			customType,
			content,
			display,
			...(details !== undefined ? { details } : {}),
		});
	} else {
		session.appendMessage(message);
	}
}

/** A hidden message as the loop carries it (a host message the model sees). */
export function hostMessage(message: HiddenMessage): AgentMessage {
	return {
		role: "host",
		customType: message.customType,
		content: message.content,
		display: false,
		details: message.details,
		timestamp: Date.now(),
	};
}
