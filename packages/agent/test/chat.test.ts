import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { localLink } from "../src/link/index.js";
import { chatMode } from "../src/modes/index.js";
import { Session } from "../src/session/index.js";
import type { StartedSession } from "../src/startup/index.js";

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
	const finished = chatMode(localLink(started), input, out, err);
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
	const finishedAgain = chatMode(localLink(started), again, new PassThrough(), errAgain);
	again.end("/exit\n");
	expect(await finishedAgain).toBe(0);
	expect(notesAgain).toContain(`Resumed session ${started.session.id} (4 messages).`);
	expect(notesAgain).toContain("you: again");
	expect(notesAgain).toContain("agent: Second answer.");
});

it("the chat says the kernel stays busy with a cell the user waits for after an interrupt, and when that cell ends", async () => {
	const ignoring = join(sessions.world.project, "ignoring");
	const release = join(sessions.world.project, "release");
	sessions.faux.setResponses([
		fauxAssistantMessage([
			fauxToolCall("ipython", {
				code: `import os, signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nopen(${JSON.stringify(ignoring)}, "w").close()\nwhile not os.path.exists(${JSON.stringify(release)}):\n    time.sleep(0.05)`,
			}),
		]),
		fauxAssistantMessage("Left it running."),
	]);
	started = await sessions.start();
	const input = new PassThrough();
	const err = new PassThrough();
	let notes = "";
	const noted = (text: string) =>
		new Promise<void>((resolve) => {
			const check = () => {
				if (!notes.includes(text)) return;
				err.off("data", check);
				resolve();
			};
			err.on("data", check);
			check();
		});
	err.on("data", (chunk) => {
		notes += chunk;
	});
	const finished = chatMode(localLink(started), input, new PassThrough(), err);
	input.write("stubborn\n");
	// Ctrl-C in the chat interrupts the running cell this way, once the cell ignores SIGINT.
	const deadline = Date.now() + 60_000;
	while (!existsSync(ignoring) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
	expect(started.kernel.interruptCell()).toBe(true);
	await noted("Type w to wait for it");
	input.write("w\n");
	await noted("Python kernel busy: the interrupted cell is still running; the next cell starts when it ends\n");
	expect(notes).not.toContain("Python kernel idle");
	writeFileSync(release, "");
	await noted("Python kernel idle: the interrupted cell has ended\n");
	input.end("/exit\n");
	expect(await finished).toBe(0);
}, 90_000);

it("the chat runs nothing typed after /exit, even when it arrives in the same read", async () => {
	sessions.faux.setResponses([fauxAssistantMessage("First answer."), fauxAssistantMessage("Never asked.")]);
	started = await sessions.start();
	const input = new PassThrough();
	const out = new PassThrough();
	let shown = "";
	out.on("data", (chunk) => {
		shown += chunk;
	});
	const finished = chatMode(localLink(started), input, out, new PassThrough());
	// Piped input: the three lines reach the chat as one chunk.
	input.end("hello\n/exit\nnever\n");
	expect(await finished).toBe(0);

	expect(shown).toContain("First answer.\n");
	expect(shown).not.toContain("Never asked.");
	const messages = Session.open(started.session.path).context().messages;
	expect(messages.map((message) => message.role)).toEqual(["user", "assistant"]);
	expect(sessions.faux.getPendingResponseCount()).toBe(1);
});
