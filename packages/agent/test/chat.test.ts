import { PassThrough } from "node:stream";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { expect, it } from "vitest";
import { runChatMode } from "../src/modes/index.js";
import { Session } from "../src/session/index.js";
import type { StartedSession } from "../src/startup/index.js";
import { useFauxSessions } from "./faux-session.js";

const sessions = useFauxSessions();
let started: StartedSession | undefined;

it("the line-by-line chat streams each answer, keeps one session across lines, and leaves on /exit", async () => {
	sessions.faux.setResponses([fauxAssistantMessage("First answer."), fauxAssistantMessage("Second answer.")]);
	started = await sessions.start();

	const input = new PassThrough();
	const out = new PassThrough();
	const err = new PassThrough();
	let shown = "";
	let notes = "";
	out.on("data", (chunk) => {
		shown += chunk;
	});
	err.on("data", (chunk) => {
		notes += chunk;
	});
	const finished = runChatMode(started, input, out, err);
	input.write("hello\n");
	input.write("again\n");
	input.write("/exit\n");
	expect(await finished).toBe(0);

	expect(shown).toContain("First answer.\n");
	expect(shown).toContain("Second answer.\n");
	expect(notes).toContain("faux/faux-1");
	expect(notes).toContain(`prime-agent --resume ${started.session.id}`);
	const texts = Session.open(started.session.path)
		.context()
		.messages.map((message) => message.role);
	expect(texts).toEqual(["user", "assistant", "user", "assistant"]);

	// Coming back to it shows where the conversation stands.
	const path = started.session.path;
	await started.dispose();
	started = await sessions.start({ resume: path });
	const again = new PassThrough();
	const errAgain = new PassThrough();
	let notesAgain = "";
	errAgain.on("data", (chunk) => {
		notesAgain += chunk;
	});
	const finishedAgain = runChatMode(started, again, new PassThrough(), errAgain);
	again.end("/exit\n");
	expect(await finishedAgain).toBe(0);
	expect(notesAgain).toContain(`Resumed session ${started.session.id} (4 messages).`);
	expect(notesAgain).toContain("you: again");
	expect(notesAgain).toContain("agent: Second answer.");
});
