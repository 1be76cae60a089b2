import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { cell, scriptAgents } from "./agent-scripts.js";
import { cachedShare, expectPromptOnlyGrows, wireView } from "./prompt-growth.js";

const sessions = useFauxSessions({ provider: "fauxresume", models: [{ id: "w" }] });

const summariser = (context: Context) =>
	context.systemPrompt?.startsWith("You summarise the conversation")
		? fauxAssistantMessage("## Goal\nExplore the data.")
		: undefined;

const texts = (request: Context | undefined) => (request?.messages ?? []).map((message) => wireText(message));

it("the first request after a resume repeats the previous request byte for byte, <ipython_state> in place, and appends the resume note and the prompt after its answer", {
	timeout: 180_000,
}, async () => {
	// /compact keeps only the last answer verbatim: <ipython_state> lands in the middle of what follows.
	sessions.world.writeHome("settings.json", { compaction: { keepRecentTokens: 50 } });
	const seen = scriptAgents(
		sessions,
		{
			root: [
				cell("data = {'answer': 42}\nprint('a' * 2000)"),
				cell("def twice(n):\n    return 2 * n\nprint('b' * 2000)"),
				fauxAssistantMessage("Explored."),
				cell("print(twice(data['answer']))"),
				fauxAssistantMessage("84."),
				fauxAssistantMessage("Still 84."),
			],
		},
		summariser,
	);
	const first = await sessions.start();
	expect((await first.agentSession.prompt("explore")).status).toBe("ok");
	expect((await first.agentSession.prompt("/compact")).status).toBe("ok");
	expect((await first.agentSession.prompt("double the answer")).status).toBe("ok");
	await first.dispose();
	const resumed = await sessions.start({ resume: first.session.id });
	expect((await resumed.agentSession.prompt("and now?")).status).toBe("ok");

	const root = seen.get("root") ?? [];
	expect(root).toHaveLength(6);
	// The compaction is the one place the history is rewritten: request 3 starts from its summary.
	expect(texts(root[3])[0]).toContain("<summary>\n## Goal\nExplore the data.\n</summary>");
	expectPromptOnlyGrows(root, { history: [3] });

	// The last request before the resume and the first after it: the same messages, then its answer, the note and the prompt.
	const before = root[4] as Context;
	const after = root[5] as Context;
	const sent = (request: Context) =>
		request.messages.filter((message) => !wireText(message).startsWith("<prime_context_task>"));
	expect(texts(before).filter((text) => text.startsWith("<ipython_state>"))).toHaveLength(1);
	expect(sent(after).slice(0, sent(before).length).map(wireView)).toEqual(sent(before).map(wireView));
	const appended = sent(after).slice(sent(before).length).map(wireText);
	expect(appended).toHaveLength(3);
	expect(appended[0]).toBe("84.");
	expect(appended[1]).toMatch(
		/^\[This session continues in a new IPython kernel\. The state saved after cell 3 of this conversation \(entry [0-9a-f]{8}\), its last cell, is restored when it starts, before your first cell runs: data, twice\. The first cell's result says which names came back\.\]$/,
	);
	expect(appended[2]).toBe("and now?");
	// What a provider's cache can bill at its cached rate: the system prompt and every message sent before.
	const { cached, share } = cachedShare([before, after]);
	const repeated =
		(before.systemPrompt ?? "").length + sent(before).reduce((sum, message) => sum + wireView(message).length, 0);
	expect(cached).toBe(repeated);
	console.log(`cached share of the first request after the resume: ${(share * 100).toFixed(1)}%`);
});
