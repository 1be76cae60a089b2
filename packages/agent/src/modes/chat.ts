import { createInterface } from "node:readline";
import { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
import { messageText } from "../session/index.js";
import type { StartedSession } from "../startup/index.js";
import { describeActiveGoal } from "./long-running.js";
import { describeOutcome } from "./outcome.js";
import { describeRunEnd } from "./run-end.js";
import { chatRunEnd } from "./run-end-lines.js";
import { onSessionLines } from "./run-result.js";
import { TextRenderer } from "./text-renderer.js";

/**
 * A plain line-by-line chat (until the full terminal UI exists): each line is a prompt, answers
 * stream back. Ctrl-C during a run interrupts the running cell (or the run when no cell runs);
 * Ctrl-C or Ctrl-D at the prompt, `/exit` or `/quit` leave.
 */
export async function runChatMode(
	started: StartedSession,
	input: NodeJS.ReadableStream,
	out: NodeJS.WritableStream,
	err: NodeJS.WritableStream,
): Promise<ExitCodeValue> {
	// The lines a daemon worker's chat view renders, through the same renderer.
	const renderer = new TextRenderer({ out, err });
	const unsubscribe = onSessionLines(started, renderer.onEvent);
	const model = `${started.model.provider}/${started.model.id}`;
	err.write(`prime-agent · ${model} · ${started.session.cwd}\n`);
	for (const notice of started.notices) err.write(`${notice}\n`);
	const activeGoal = describeActiveGoal(started);
	if (activeGoal) err.write(`${activeGoal}\n`);
	if (started.resumed) err.write(resumeSummary(started));
	err.write("Type a message and press Enter. Ctrl-C interrupts a running cell; /exit leaves.\n");

	const terminal = Boolean((input as { isTTY?: boolean }).isTTY);
	const rl = createInterface({ input, output: out, terminal, prompt: "> " });
	let running = false;
	let presses = 0;
	const done = new Promise<void>((resolve) => rl.on("close", resolve));
	rl.on("SIGINT", () => {
		if (!running) {
			rl.close();
			return;
		}
		presses++;
		if (presses === 1 && started.kernel.interruptCell()) {
			err.write("\nInterrupting the running cell (Ctrl-C again stops the turn)…\n");
			return;
		}
		started.agentSession.abort();
		err.write("\nStopping the turn…\n");
	});

	// A cell that ignores an interrupt: ask whether to wait for it or restart the kernel.
	let answerQuestion: ((line: string) => void) | undefined;
	started.kernel.onStillBusy = () =>
		new Promise((resolve) => {
			err.write(
				"\nThe cell ignored the interrupt and is still running. Type w to wait for it, or r to restart the kernel (its variables are lost): ",
			);
			answerQuestion = (line) => {
				answerQuestion = undefined;
				resolve(line.trim().toLowerCase().startsWith("w") ? "wait" : "restart");
			};
		});

	const queue: string[] = [];
	const drain = async () => {
		while (queue.length > 0) {
			const text = queue.shift() as string;
			running = true;
			presses = 0;
			const outcome = await started.agentSession.prompt(text).catch((error: unknown) => {
				// A message the chat can go on after (too large for the model): said, and the next line is read.
				if (!(error instanceof UserError)) throw error;
				err.write(`${error.message}\n${error.hint}\n`);
				return undefined;
			});
			running = false;
			if (!outcome) continue;
			chatRunEnd(describeRunEnd(started, outcome, describeOutcome(outcome, started)), err);
		}
		rl.prompt();
	};
	let chain = Promise.resolve();
	rl.on("line", (line) => {
		if (answerQuestion) {
			answerQuestion(line);
			return;
		}
		const text = line.trim();
		if (text === "/exit" || text === "/quit") {
			rl.close();
			return;
		}
		if (text === "") {
			if (!running) rl.prompt();
			return;
		}
		queue.push(text);
		if (!running) chain = chain.then(drain);
	});
	rl.prompt();
	await done;
	answerQuestion?.("restart");
	await chain;
	if (started.agentSession.running) {
		started.agentSession.abort();
		await started.agentSession.agent.waitForIdle();
	}
	unsubscribe();
	if (started.session.persisted)
		err.write(`Session saved: resume with \`prime-agent --resume ${started.session.id}\`.\n`);
	return ExitCode.ok;
}

/** Where a resumed conversation stands: how long it is and the last exchange, cut to a line each. */
function resumeSummary(started: StartedSession): string {
	const messages = started.session.context().messages;
	const last = (role: string) => {
		const found = [...messages].reverse().find((message) => message.role === role);
		const text = found ? messageText(found).replace(/\s+/g, " ").trim() : "";
		return text.length > 100 ? `${text.slice(0, 99)}…` : text;
	};
	const lines = [`Resumed session ${started.session.id} (${messages.length} messages).`];
	if (last("user")) lines.push(`  you: ${last("user")}`);
	if (last("assistant")) lines.push(`  agent: ${last("assistant")}`);
	return `${lines.join("\n")}\n`;
}
