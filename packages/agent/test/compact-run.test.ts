import { type Context, fauxAssistantMessage, fauxToolCall, type Message } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { expect, it } from "vitest";
import type { StartedSession } from "../src/startup/index.js";

const sessions = useFauxSessions({ provider: "fauxk", models: [{ id: "m", contextWindow: 1_000_000 }] });
let world: TempWorld;
let started: StartedSession | undefined;

function text(message: Message): string {
	if (typeof message.content === "string") return message.content;
	return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function lastToolResult(context: Context): string {
	return text(context.messages.filter((message) => message.role === "toolResult").pop() as Message);
}

it("`await compact.run()` in a session's kernel compacts at the next turn boundary and the kernel keeps its variables", async () => {
	world = sessions.newWorld();
	world.writeHome("settings.json", { compaction: { keepRecentTokens: 50 } });
	started = await sessions.start();

	const summaries: string[] = [];
	const sent: Context[] = [];
	const steps = [
		fauxAssistantMessage(fauxToolCall("ipython", { code: "table = list(range(5))\nprint('t' * 4000)" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "print(await compact.run('keep the table'))" })),
		fauxAssistantMessage(fauxToolCall("ipython", { code: "print(sum(table))" })),
		fauxAssistantMessage("done"),
	];
	sessions.faux.setResponses(
		Array.from({ length: 8 }, () => (context: Context) => {
			if (context.systemPrompt?.startsWith("You summarise")) {
				summaries.push(text(context.messages[0] as Message));
				return fauxAssistantMessage("## Goal\nKernel-requested summary.");
			}
			sent.push(JSON.parse(JSON.stringify(context)));
			return steps.shift() ?? fauxAssistantMessage("no more steps");
		}),
	);

	const outcome = await started.agentSession.prompt("work, then compact");
	expect(outcome.status).toBe("ok");
	// The cell got the host's answer through the session's own kernel; the compaction ran before
	// the following model call.
	const afterRequest = sent[2] as Context;
	expect(lastToolResult(afterRequest)).toContain("Compaction requested");
	expect(summaries).toHaveLength(1);
	expect(summaries[0]).toContain("Additional instructions: keep the table");
	expect(text(afterRequest.messages[0] as Message)).toContain("Kernel-requested summary.");
	expect(started.agentSession.session.branch().filter((entry) => entry.type === "compaction")).toHaveLength(1);
	// The variable defined before the compaction still works after it.
	expect(lastToolResult(sent[3] as Context)).toContain("10");
});
