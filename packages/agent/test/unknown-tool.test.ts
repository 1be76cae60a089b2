import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";

const sessions = useFauxSessions();

it("a call of a removed tool (bash) is answered with where the capability went, in the request and the transcript", async () => {
	const sent: Context[] = [];
	sessions.faux.setResponses([
		fauxAssistantMessage(fauxToolCall("bash", { command: "ls" })),
		fauxAssistantMessage(fauxToolCall("grepper", { pattern: "x" })),
		(context) => {
			sent.push(JSON.parse(JSON.stringify(context)));
			return fauxAssistantMessage("understood");
		},
	]);
	const started = await sessions.start();
	expect((await started.agentSession.prompt("list the files")).status).toBe("ok");
	const results = (sent[0] as Context).messages.filter((message) => message.role === "toolResult");
	expect(results.map(wireText)).toEqual([
		'There is no "bash" tool: the model reads, writes, searches and edits files with Python, and runs commands in %%bash cells, all inside its one tool, "ipython". Call "ipython" with Python code, or with a cell whose first line is %%bash for shell commands.',
		'There is no "grepper" tool. The tools are: "ipython", "prime_context".',
	]);
	const stored = started.session
		.branch()
		.flatMap((entry) => (entry.type === "message" && entry.message.role === "toolResult" ? [entry.message] : []));
	expect(stored.map((message) => message.isError)).toEqual([true, true]);
	expect(stored.map(wireText)).toEqual(results.map(wireText));
});
