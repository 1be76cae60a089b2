import type { Api, Model, UserMessage } from "@mariozechner/pi-ai";
import { requestTokens } from "./tokens.js";

/** The part of the compaction settings the answer's room depends on. */
export interface AnswerReserveSettings {
	/** Room left for the answer: compaction triggers above `contextWindow - reserveTokens`. */
	reserveTokens: number;
}

/**
 * The room compaction keeps free for the answer on a window: the setting, at most half the window
 * (on windows smaller than twice the reserve, the answer gets half the window).
 */
export function answerReserve(settings: AnswerReserveSettings, contextWindow: number): number {
	return Math.min(settings.reserveTokens, Math.floor(contextWindow / 2));
}

/**
 * The most output tokens a request holding `promptTokens` may ask for: what the window leaves after
 * the prompt, and never less than the reserve compaction keeps (the prompt is an estimate, and
 * compaction holds it under `contextWindow - reserve`; a few hundred tokens would cut every answer
 * short). A server that enforces its window (vLLM, OpenAI) refuses a request whose prompt and
 * requested output together exceed it, however short the answer would have been.
 */
export function outputRoom(contextWindow: number, promptTokens: number, settings: AnswerReserveSettings): number {
	// At least one token: a prompt that fills the window alone is the server's to refuse as too long.
	return Math.max(contextWindow - promptTokens, answerReserve(settings, contextWindow), 1);
}

/**
 * `model` with its output maximum lowered to the room its window leaves (see `outputRoom`); the model
 * itself when it already fits or says nothing of its window. Every provider sizes `max_tokens` from
 * it (thinking budgets included), so a request never asks for more than the window holds.
 */
export function fitOutputToWindow<TApi extends Api>(
	model: Model<TApi>,
	promptTokens: number,
	settings: AnswerReserveSettings,
): Model<TApi> {
	if (model.contextWindow <= 0 || model.maxTokens <= 0) return model;
	const room = outputRoom(model.contextWindow, promptTokens, settings);
	return room < model.maxTokens ? { ...model, maxTokens: room } : model;
}

/**
 * `model` sized for one request outside the conversation (a refinement's planning, a skill's draft):
 * no compaction holds its prompt under a trigger, so the answer gets what the window leaves after
 * it, however little, rather than a reserve the server would refuse.
 */
export function fitOneRequest<TApi extends Api>(
	model: Model<TApi>,
	systemPrompt: string,
	message: UserMessage,
): Model<TApi> {
	return fitOutputToWindow(model, requestTokens([message], systemPrompt), { reserveTokens: 0 });
}
