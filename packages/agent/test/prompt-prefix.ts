import type { Context, Message } from "@mariozechner/pi-ai";
import { expect } from "vitest";
import { wireText } from "./faux-session.js";

/**
 * The history a provider call sent: the JSON of each message, without the Prime Context task
 * snapshot that the host places last on every call (it is not history: it stays last).
 */
export function sentHistory(context: Context): string[] {
	const messages = context.messages.map((message) => JSON.stringify(message));
	const last = context.messages.at(-1) as Message | undefined;
	if (last?.role === "user" && wireText(last).startsWith("<prime_context_task>")) messages.pop();
	return messages;
}

/** Each call's history extends the history of the call before it, byte for byte, in order. */
export function expectHistoryOnlyGrows(contexts: readonly Context[]): void {
	for (let index = 1; index < contexts.length; index++) {
		const before = sentHistory(contexts[index - 1] as Context);
		const after = sentHistory(contexts[index] as Context);
		expect(after.length, `call ${index + 1} sends fewer messages than call ${index}`).toBeGreaterThanOrEqual(
			before.length,
		);
		expect(after.slice(0, before.length), `call ${index + 1} rewrote what call ${index} sent`).toEqual(before);
	}
}
