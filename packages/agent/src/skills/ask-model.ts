import { type Api, completeSimple, type Model } from "@mariozechner/pi-ai";

/** The session's current model and key, read at each call (the model may change mid-session). */
export interface SessionModel {
	model(): Model<Api>;
	apiKey(): string;
}

/** One call outside the conversation (nothing is recorded); the answer's text, or a throw saying why not. */
export async function askModel(session: SessionModel, systemPrompt: string, text: string): Promise<string> {
	const model = session.model();
	const response = await completeSimple(
		model,
		{ systemPrompt, messages: [{ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }] },
		{ apiKey: session.apiKey(), maxTokens: Math.min(model.maxTokens, 16_384) },
	);
	if (response.stopReason === "error" || response.stopReason === "aborted") {
		throw new Error(`the model call failed: ${response.errorMessage ?? response.stopReason}`);
	}
	return response.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
