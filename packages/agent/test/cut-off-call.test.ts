import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { CUT_OFF_CALL_REASON } from "../src/orchestrator/cut-off-call.js";

const sessions = useFauxSessions();

it("a cell the answer was cut off writing (output token limit) is not run; the model is told to send it again", async () => {
	const sent: Context[] = [];
	sessions.faux.setResponses([
		// Two calls, the answer cut in the second: the first was complete when the second began.
		fauxAssistantMessage(
			[
				fauxToolCall("ipython", { code: "open('FIRST_RAN', 'w').write('1')" }),
				fauxToolCall("ipython", { code: "open('PARTIAL_RAN', 'w').write('1')\nprint('first half ran')\n" }),
			],
			{ stopReason: "length" },
		),
		// Cut off in its text after a complete call: the call runs.
		fauxAssistantMessage(
			[fauxToolCall("ipython", { code: "open('THEN_RAN', 'w').write('1')" }), fauxText("and then")],
			{
				stopReason: "length",
			},
		),
		(context) => {
			sent.push(JSON.parse(JSON.stringify(context)));
			return fauxAssistantMessage("I will resend it.");
		},
	]);
	const started = await sessions.start();
	expect((await started.agentSession.prompt("write the files")).status).toBe("ok");
	const cwd = sessions.world.project;
	expect(existsSync(join(cwd, "FIRST_RAN"))).toBe(true);
	expect(existsSync(join(cwd, "PARTIAL_RAN"))).toBe(false);
	expect(existsSync(join(cwd, "THEN_RAN"))).toBe(true);
	const results = (sent[0] as Context).messages.filter((message) => message.role === "toolResult");
	expect(results.map(wireText)).toEqual(["1", CUT_OFF_CALL_REASON, "1"]);
	expect(results.map((result) => result.isError)).toEqual([false, true, false]);
});
