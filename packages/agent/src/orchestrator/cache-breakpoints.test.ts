import { describe, expect, it } from "vitest";
import { markSecondToLastMessage } from "./cache-breakpoints.js";

const MARK = { type: "ephemeral" };

describe("markSecondToLastMessage", () => {
	it("marks the last block of the message before a marked last message; a string is its one text block", () => {
		const payload = {
			system: [{ type: "text", text: "system", cache_control: MARK }],
			messages: [
				{ role: "user", content: "a notice" },
				{ role: "user", content: [{ type: "text", text: "<prime_context_task>", cache_control: MARK }] },
			],
		};
		markSecondToLastMessage(payload);
		expect(payload.messages[0]).toEqual({
			role: "user",
			content: [{ type: "text", text: "a notice", cache_control: MARK }],
		});
	});

	it("marks an assistant message's last tool call, never a thinking block after it", () => {
		const assistant = {
			role: "assistant",
			content: [
				{ type: "tool_use", id: "t", name: "ipython", input: {} },
				{ type: "thinking", thinking: "…", signature: "s" },
			],
		};
		const payload = {
			messages: [assistant, { role: "user", content: [{ type: "text", text: "x", cache_control: MARK }] }],
		};
		markSecondToLastMessage(payload);
		expect(assistant.content.map((block) => "cache_control" in block)).toEqual([true, false]);
	});

	it("adds nothing at Anthropic's limit of four marks, nor when the last message has none", () => {
		const atLimit = {
			system: [
				{ type: "text", text: "identity", cache_control: MARK },
				{ type: "text", text: "system", cache_control: MARK },
			],
			tools: [{ name: "ipython", cache_control: MARK }],
			messages: [
				{ role: "user", content: [{ type: "text", text: "a" }] },
				{ role: "user", content: [{ type: "text", text: "b", cache_control: MARK }] },
			],
		};
		const unmarked = {
			messages: [
				{ role: "user", content: "a" },
				{ role: "user", content: [{ type: "text", text: "b" }] },
			],
		};
		const before = [JSON.stringify(atLimit), JSON.stringify(unmarked)];
		markSecondToLastMessage(atLimit);
		markSecondToLastMessage(unmarked);
		expect([JSON.stringify(atLimit), JSON.stringify(unmarked)]).toEqual(before);
	});
});
