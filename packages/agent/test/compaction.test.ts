import { readFileSync } from "node:fs";
import {
	type AssistantMessage,
	type Context,
	fauxAssistantMessage,
	fauxToolCall,
	type Message,
	type StreamOptions,
} from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import { DEFAULT_COMPACTION_SETTINGS, SUMMARY_SECTIONS } from "../src/compaction/index.js";
import type { CompactionEntry, SessionEntry } from "../src/session/index.js";
import type { StartedSession } from "../src/startup/index.js";

const sessions = useFauxSessions({
	provider: "fauxc",
	models: [
		{ id: "small", contextWindow: 30_000, maxTokens: 4096 },
		{ id: "large", contextWindow: 1_000_000, maxTokens: 4096 },
		{ id: "window32k", contextWindow: 32_768, maxTokens: 4096 },
	],
});

type Step = (context: Context) => AssistantMessage;

/**
 * Plays the model: summary requests (recognised by the summariser's system prompt) get a summary,
 * every other call takes the next scripted step. Records both kinds of request.
 */
function script(steps: Step[]) {
	const agentCalls: Context[] = [];
	const summaryCalls: string[] = [];
	let next = 0;
	const respond = (context: Context, options?: StreamOptions) => {
		// The faux provider counts a prompt missing its cache twice (as input and as cache write), so the
		// first answer after a compaction would report twice its context; real providers count it once.
		if (options) options.cacheRetention = "none";
		const copy = JSON.parse(JSON.stringify(context)) as Context;
		if (context.systemPrompt?.startsWith("You summarise the conversation")) {
			const text = wireText(copy.messages[0] as Message);
			summaryCalls.push(text);
			return fauxAssistantMessage(
				`## Goal\nSummary number ${summaryCalls.length}.\n\n## Critical Context\n- Kernel names worth keeping: data`,
			);
		}
		agentCalls.push(copy);
		const step = steps[next++];
		if (!step) throw new Error(`the script has no step ${next}`);
		return step(copy);
	};
	sessions.faux.setResponses(Array.from({ length: 60 }, () => respond));
	return { agentCalls, summaryCalls };
}

const cell = (code: string, id?: string) => () =>
	fauxAssistantMessage(fauxToolCall("ipython", { code }, id ? { id } : undefined));
const say = (text: string) => () => fauxAssistantMessage(text);

function fileEntries(path: string): SessionEntry[] {
	return readFileSync(path, "utf8")
		.trim()
		.split("\n")
		.slice(1)
		.map((line) => JSON.parse(line));
}

/** Every tool result sent has its call earlier in the same request. */
function expectNoOrphans(context: Context): void {
	const calls = new Set<string>();
	for (const message of context.messages) {
		if (message.role === "assistant") {
			for (const part of message.content) if (part.type === "toolCall") calls.add(part.id);
		}
		if (message.role === "toolResult") expect(calls.has(message.toolCallId)).toBe(true);
	}
}

async function start(model: string, keepRecentTokens?: number): Promise<StartedSession> {
	const world = sessions.world;
	if (keepRecentTokens !== undefined) world.writeHome("settings.json", { compaction: { keepRecentTokens } });
	// Compaction is tested on raw output: the context broker would keep the context small.
	world.writeHome("prime-context.json", { enabled: false });
	return sessions.start({ model });
}

describe("compaction", () => {
	it("a long session compacts at a turn boundary: valid cut, verbatim tail, six sections, kernel kept", async () => {
		// contextWindow 30,000 - reserve 16,384: compaction is due above 13,616 tokens in context.
		const { agentCalls, summaryCalls } = script([
			cell("data = {'answer': 42}\nprint('a' * 12000)", "c1"),
			cell("print('b' * 12000)", "c2"),
			cell("print('c' * 12000)", "c3"),
			cell("print('d' * 12000)", "c4"),
			cell("print('e' * 12000)", "c5"),
			cell("print(data['answer'] + 1)", "c6"),
			say("The answer plus one is 43."),
			cell("print('f' * 12000)", "c7"),
			say("More output kept."),
		]);
		const session = await start("fauxc/small", 4000);
		const outcome = await session.agentSession.prompt("explore the data");
		expect(outcome.status).toBe("ok");
		expect(outcome.lastAssistant?.content).toEqual([expect.objectContaining({ text: "The answer plus one is 43." })]);

		// One summary request, with the six sections and the rule about kernel names.
		expect(summaryCalls.length).toBe(1);
		for (const section of SUMMARY_SECTIONS) expect(summaryCalls[0]).toContain(`## ${section}`);
		expect(summaryCalls[0]).toContain("NOT reset");
		expect(summaryCalls[0]).toContain("data");
		expect(summaryCalls[0]).not.toContain("<previous-summary>");

		// The compaction entry cuts at a valid point; the kept entries are sent verbatim after the summary.
		const branch = session.session.branch();
		const compactionIndex = branch.findIndex((entry) => entry.type === "compaction");
		const compaction = branch[compactionIndex] as CompactionEntry;
		const keptIndex = branch.findIndex((entry) => entry.id === compaction.firstKeptEntryId);
		const firstKept = branch[keptIndex] as SessionEntry;
		expect(firstKept.type === "message" && firstKept.message.role).not.toBe("toolResult");
		const keptMessages = branch
			.slice(keptIndex, compactionIndex)
			.filter((entry) => entry.type === "message")
			.map((entry) => (entry as { message: Message }).message);
		expect(keptMessages.length).toBeGreaterThan(0);
		const afterCompaction = agentCalls.find((context) =>
			wireText(context.messages[0] as Message).includes("Summary number 1"),
		) as Context;
		expect(afterCompaction).toBeDefined();
		// The summary is framed as the record that replaced the earlier turns, not as a new request.
		const summaryText = wireText(afterCompaction.messages[0] as Message);
		expect(
			summaryText.startsWith("The conversation before this point was compacted: the earlier turns were replaced"),
		).toBe(true);
		expect(summaryText).toContain("<summary>\n## Goal\nSummary number 1.");
		expect(summaryText.endsWith("</summary>")).toBe(true);
		expect(afterCompaction.messages.slice(1, 1 + keptMessages.length)).toEqual(
			JSON.parse(JSON.stringify(keptMessages.map((message) => ({ ...message })))),
		);
		for (const context of agentCalls) expectNoOrphans(context);

		// The kernel was not touched: `data` is named in <ipython_state> and still works afterwards.
		const state = afterCompaction.messages.map(wireText).find((text) => text.includes("<ipython_state>"));
		expect(state).toContain("data (dict)");
		expect(state).toContain("kernel persisted");
		const lastCall = agentCalls[agentCalls.length - 1] as Context;
		const lastResult = lastCall.messages.filter((message) => message.role === "toolResult").pop() as Message;
		expect(wireText(lastResult)).toBe("43");

		// The session file holds the compaction; a later /compact updates the previous summary.
		expect(fileEntries(session.session.path).some((entry) => entry.type === "compaction")).toBe(true);
		expect((await session.agentSession.prompt("print more")).status).toBe("ok");
		expect(summaryCalls.length).toBe(1);
		const command = await session.agentSession.prompt("/compact keep the numbers");
		expect(command.command?.name).toBe("compact");
		expect(command.command?.message).toMatch(/^Compacted: [\d,]+ tokens before; the kernel kept its state\.$/);
		const update = summaryCalls[summaryCalls.length - 1] as string;
		expect(update).toContain("<previous-summary>\n## Goal\nSummary number 1.");
		expect(update).toContain("Additional instructions: keep the numbers");
		const compactions = session.session.branch().filter((entry) => entry.type === "compaction");
		expect(compactions).toHaveLength(2);
	});

	it("settles on a 32K window with the default 20,000 kept tokens: one compaction, every request under the trigger", async () => {
		// 32,768 - 16,384: due above 16,384 tokens; the kept part is clamped to 8,192 so the compacted context fits.
		const cells = Array.from({ length: 17 }, (_, index) => cell(`print('${index % 10}' * 4000)`));
		const { agentCalls, summaryCalls } = script([...cells, say("done")]);
		const session = await start("fauxc/window32k");
		const outcome = await session.agentSession.prompt("print the blocks");
		expect(outcome.status).toBe("ok");
		expect(summaryCalls.length).toBe(1);
		expect(agentCalls.length).toBe(18);
		const inputs = session.session
			.branch()
			.flatMap((entry) => (entry.type === "message" && entry.message.role === "assistant" ? [entry.message] : []))
			.map((message) => message.usage.totalTokens);
		for (const input of inputs) expect(input).toBeLessThanOrEqual(16_384);
	});

	it("a context overflow compacts and retries the request once", async () => {
		const { agentCalls, summaryCalls } = script([
			cell("rows = [1, 2, 3]\nprint('x' * 6000)", "o1"),
			cell("print('y' * 6000)", "o2"),
			say("first answer"),
			() =>
				fauxAssistantMessage("", {
					stopReason: "error",
					errorMessage: "prompt is too long: 213462 tokens > 200000 maximum",
				}),
			cell("print(sum(rows))", "o3"),
			say("recovered"),
		]);
		const session = await start("fauxc/large", 1000);
		expect((await session.agentSession.prompt("first")).status).toBe("ok");
		const outcome = await session.agentSession.prompt("second");
		expect(outcome.status).toBe("ok");
		expect(outcome.lastAssistant?.content).toEqual([expect.objectContaining({ text: "recovered" })]);
		expect(summaryCalls).toHaveLength(1);

		// The retry was sent compacted; the failed answer is off the branch but still in the file.
		const retry = agentCalls[4] as Context;
		expect(wireText(retry.messages[0] as Message)).toContain("Summary number 1");
		expect(
			wireText(retry.messages.find((message) => wireText(message).includes("<ipython_state>")) as Message),
		).toContain("rows (list)");
		const sum = agentCalls[5]?.messages.filter((message) => message.role === "toolResult").pop() as Message;
		expect(wireText(sum)).toBe("6");
		const isFailure = (entry: SessionEntry) =>
			entry.type === "message" && entry.message.role === "assistant" && entry.message.stopReason === "error";
		expect(session.session.branch().some(isFailure)).toBe(false);
		expect(fileEntries(session.session.path).some(isFailure)).toBe(true);
	});
});

it("the README states the compaction numbers the code uses", () => {
	const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");
	const { reserveTokens, keepRecentTokens } = DEFAULT_COMPACTION_SETTINGS;
	expect(readme).toContain(`reserve ${reserveTokens.toLocaleString("en-US")} tokens`);
	expect(readme).toContain(`\`keepRecentTokens\` (default ${keepRecentTokens.toLocaleString("en-US")})`);
	expect(readme).toContain(`"reserveTokens": ${reserveTokens}, "keepRecentTokens": ${keepRecentTokens}`);
	for (const section of SUMMARY_SECTIONS) expect(readme).toContain(section);
});
