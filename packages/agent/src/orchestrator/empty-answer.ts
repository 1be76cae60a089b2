import type { AssistantMessage } from "@mariozechner/pi-ai";

/** Why a run whose every answer was empty failed (what a wrong `baseUrl` or a broken server gives). */
export const EMPTY_ANSWER =
	"it answered with nothing: no text and no tool call in any answer of this run (a server that is not an OpenAI-compatible streaming endpoint, such as a wrong baseUrl, answers like this)";

/** An answer with no text, no thinking and no tool call. */
export function isEmptyAnswer(message: AssistantMessage): boolean {
	return message.content.every((block) =>
		block.type === "text" ? block.text.trim() === "" : block.type === "thinking" ? block.thinking.trim() === "" : false,
	);
}
