import { type Api, completeSimple, type Model } from "@mariozechner/pi-ai";
import { fitOneRequest } from "../compaction/index.js";

/** The session's current model and key, read at each call (the model may change mid-session). */
export interface SessionModel {
	model(): Model<Api>;
	apiKey(): string;
}

/** One call outside the conversation (nothing is recorded); the answer's text, or a throw saying why not. */
export async function askModel(session: SessionModel, systemPrompt: string, text: string): Promise<string> {
	const message = { role: "user" as const, content: [{ type: "text" as const, text }], timestamp: Date.now() };
	// The trajectory fills much of a small window: the answer asks for what is left.
	const model = fitOneRequest(session.model(), systemPrompt, message);
	const response = await completeSimple(
		model,
		{ systemPrompt, messages: [message] },
		{ apiKey: session.apiKey(), maxTokens: Math.min(model.maxTokens, 16_384) },
	);
	if (response.stopReason === "error" || response.stopReason === "aborted") {
		throw new Error(`the model call failed: ${response.errorMessage ?? response.stopReason}`);
	}
	return response.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
