import { PassThrough } from "node:stream";
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import { TextRenderer } from "./text-renderer.js";

function render(events: AgentEvent[]): string {
	const out = new PassThrough();
	const err = new PassThrough();
	const renderer = new TextRenderer({ out, err });
	for (const event of events) renderer.onEvent(event);
	err.end();
	return String(err.read() ?? "");
}

function start(toolName: string, args: Record<string, unknown>): AgentEvent {
	return { type: "tool_execution_start", toolCallId: "call_1", toolName, args };
}

describe("text renderer progress lines", () => {
	it("show the first line of a cell and how many lines follow", () => {
		expect(render([start("ipython", { code: "import os\nprint(os.getcwd())\n" })])).toBe(
			"▸ ipython: import os (+1 lines)\n",
		);
	});

	it("show the arguments of a tool without code, so a recovery call says what it asked for", () => {
		const line = render([start("prime_context", { action: "read", id: "obs_000001", startLine: 200, endLine: 279 })]);
		expect(line).toBe("▸ prime_context: action=read id=obs_000001 startLine=200 endLine=279\n");
	});

	it("cut long arguments to one short line", () => {
		const line = render([start("prime_context", { action: "search", query: "x".repeat(500) })]);
		expect(line.length).toBeLessThan(140);
		expect(line.endsWith("…\n")).toBe(true);
	});
});

describe("text renderer side lines", () => {
	it("end an answer still streaming before a line on err, and add no second line break at its end", () => {
		const out = new PassThrough();
		const err = new PassThrough();
		const renderer = new TextRenderer({ out, err });
		const delta = (text: string) =>
			({
				type: "message_update",
				assistantMessageEvent: { type: "text_delta", delta: text },
			}) as unknown as AgentEvent;
		renderer.onEvent(delta("still"));
		renderer.note("Goal g-1 stopped at its budget");
		renderer.onEvent({ type: "message_end", message: { role: "assistant" } } as unknown as AgentEvent);
		renderer.note("Goal g-1 paused");
		out.end();
		err.end();
		expect(String(out.read())).toBe("still\n");
		expect(String(err.read())).toBe("Goal g-1 stopped at its budget\nGoal g-1 paused\n");
	});
});
