import { createInterface } from "node:readline";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { ExitCode, type ExitCodeValue } from "../errors.js";
import type { QueuedInput } from "../link/input-queue.js";
import type { SessionLink } from "../link/session-link.js";
import { messageText } from "../session/messages.js";
import { chatRunEnd } from "./run-end-lines.js";
import { TextRenderer } from "./text-renderer.js";

export interface ChatOptions {
	/**
	 * `attach`: the entries written while the view was away (one line each), said instead of where a
	 * resumed conversation stands.
	 */
	replay?: readonly string[];
}

/**
 * The line chat, in process or over a worker (new sessions without a terminal UI, and `attach`):
 * each line is a prompt, answers stream to `out`, progress and notes to `err`. Ctrl-C during this
 * view's run interrupts the running cell (then the run); Ctrl-C or Ctrl-D at the prompt, `/exit`,
 * `/quit` or `/detach` leave. A session in this process ends with the chat, so `/exit` first lets
 * the prompts typed before it run; a worker's session goes on without the view, which leaves at
 * once (and follows the worker through a restart when the link does). A cell that ignores an
 * interrupt asks whether to wait for it; runs this view did not start (a woken turn, another
 * view's) are reported as they end.
 */
export async function chatMode(
	link: SessionLink,
	input: NodeJS.ReadableStream,
	out: NodeJS.WritableStream,
	err: NodeJS.WritableStream,
	options: ChatOptions = {},
): Promise<ExitCodeValue> {
	const inWorker = link.agentKey !== undefined;
	await greet(link, err, options);
	const renderer = new TextRenderer({ out, err });
	const terminal = Boolean((input as { isTTY?: boolean }).isTTY);
	const rl = createInterface({ input, output: out, terminal, prompt: "> " });
	/** This view's prompts not yet ended. */
	let ownRuns = 0;
	let runsDone: (() => void) | undefined;
	let leaveNow = false;
	let bye: string | undefined;
	let closed = false;
	/** The still-busy question waiting for its answer (the next line typed). */
	let asking: number | undefined;

	const unsubscribe = link.subscribe((event) => {
		switch (event.type) {
			case "still_busy":
				// Nobody is left to answer once input has ended: the kernel is restarted, as with no view.
				if (closed) return link.answerStillBusy("restart", event.question);
				asking = event.question;
				err.write(
					"\nThe cell ignored the interrupt and is still running. Type w to wait for it, or r to restart the kernel (its variables are lost): ",
				);
				return;
			case "still_busy_answered":
				if (asking === event.question) {
					asking = undefined;
					err.write(`\nAnswered in another view: ${event.choice}.\n`);
				}
				return;
			case "run_end":
				// A run this view did not start: a woken turn, a schedule's, another view's.
				chatRunEnd(event, err);
				return;
			case "reconnecting":
				err.write(`${reconnectingText(event.reason)}\n`);
				return;
			case "reconnected":
				err.write(`${reconnectedText(link.agentKey ?? "", event.reason)}\n`);
				if (!closed) rl.prompt();
				return;
			case "bye":
				bye = event.reason;
				rl.close();
				runsDone?.();
				return;
			default:
				renderer.onEvent(event);
		}
	});
	const done = new Promise<void>((resolve) =>
		rl.on("close", () => {
			closed = true;
			resolve();
		}),
	);
	const onCtrlC = () => {
		if (ownRuns === 0) {
			leaveNow = true;
			rl.close();
			return;
		}
		void link.interrupt().then(
			(action) =>
				err.write(
					action === "cell" || action === "pending"
						? "\nInterrupting the running cell (Ctrl-C again stops the turn)…\n"
						: "\nStopping the turn…\n",
				),
			(error: Error) => err.write(`\n${error.message}\n`),
		);
	};
	// On a terminal readline reads Ctrl-C as a key; with piped input (`cat prompts | prime-agent`) the
	// terminal's Ctrl-C arrives as SIGINT, which would otherwise kill the view mid-run.
	rl.on("SIGINT", onCtrlC);
	if (!terminal) process.on("SIGINT", onCtrlC);
	rl.on("line", (line) => {
		// Readline still hands over the lines read in the same chunk as `/exit`: they were typed after it.
		if (closed) return;
		if (asking !== undefined) {
			link.answerStillBusy(line.trim().toLowerCase().startsWith("w") ? "wait" : "restart", asking);
			asking = undefined;
			return;
		}
		const text = line.trim();
		if (text === "/exit" || text === "/quit" || text === "/detach") {
			leaveNow = inWorker;
			rl.close();
			return;
		}
		if (text === "") {
			if (ownRuns === 0) rl.prompt();
			return;
		}
		ownRuns++;
		void link.prompt(text).then((end) => {
			// A worker that stopped for good ended the run: the chat's last line says so.
			if (bye === undefined) chatRunEnd(end, err);
			ownRuns--;
			if (ownRuns > 0) return;
			runsDone?.();
			if (!closed) rl.prompt();
		});
	});
	rl.prompt();
	await done;
	if (asking !== undefined) link.answerStillBusy("restart", asking);
	// The end of piped input (or `/exit` in this process) lets this view's prompts run first.
	if (!leaveNow && ownRuns > 0 && bye === undefined)
		await new Promise<void>((resolve) => {
			runsDone = resolve;
		});
	process.off("SIGINT", onCtrlC);
	unsubscribe();
	if (bye !== undefined) {
		err.write(`The agent's worker stopped: ${bye}.\n`);
		return ExitCode.ok;
	}
	const said = await link.close();
	if (said) err.write(`${said}\n`);
	return ExitCode.ok;
}

/** The chat's first lines: the session, its notices, where it stands, and how to use it. */
async function greet(link: SessionLink, err: NodeJS.WritableStream, options: ChatOptions): Promise<void> {
	const status = link.status();
	const agent = link.agentKey ? ` · agent ${link.agentKey}` : "";
	err.write(`prime-agent · ${status.model.provider}/${status.model.id} · ${status.session.cwd}${agent}\n`);
	for (const notice of link.notices) err.write(`${notice}\n`);
	if (options.replay) {
		const lines = options.replay;
		err.write(
			lines.length === 0
				? "Nothing happened while detached.\n"
				: `While detached (${lines.length} entr${lines.length === 1 ? "y" : "ies"}):\n${lines.map((line) => `  ${line}`).join("\n")}\n`,
		);
		if (status.running) err.write("The agent is working; its output follows.\n");
	} else if (link.resumed) err.write(resumeSummary(status.session.id, await link.history()));
	for (const line of queuedLines(status.queued)) err.write(`${line}\n`);
	err.write(
		`Type a message and press Enter. Ctrl-C interrupts a running cell; /exit ${link.agentKey ? "detaches (the session keeps running)" : "leaves"}.\n`,
	);
}

/** Where a resumed conversation stands: how long it is and the last exchange, cut to a line each. */
function resumeSummary(id: string, messages: readonly AgentMessage[]): string {
	const last = (role: string) => {
		const found = [...messages].reverse().find((message) => message.role === role);
		const text = found ? messageText(found).replace(/\s+/g, " ").trim() : "";
		return text.length > 100 ? `${text.slice(0, 99)}…` : text;
	};
	const lines = [`Resumed session ${id} (${messages.length} messages).`];
	if (last("user")) lines.push(`  you: ${last("user")}`);
	if (last("assistant")) lines.push(`  agent: ${last("assistant")}`);
	return `${lines.join("\n")}\n`;
}

const WAITS_FOR: Record<QueuedInput["kind"], string> = {
	steer: "after the current step",
	follow_up: "after this turn",
	prompt: "when the turn ends",
};

/** What the session holds queued (by any view, before or after a detach), one line each. */
function queuedLines(queued: readonly QueuedInput[]): string[] {
	if (queued.length === 0) return [];
	return [
		`Queued (${queued.length}):`,
		...queued.map((input) => `  ${input.text.replace(/\s+/g, " ").trim()}  (${WAITS_FOR[input.kind]})`),
	];
}

/** What the chat says when the worker it follows goes, and when it is back. */
function reconnectingText(reason?: string): string {
	return reason
		? `The agent's worker is being started again (${reason})…`
		: "The agent's worker stopped unexpectedly; waiting for the supervisor to restart it…";
}

function reconnectedText(key: string, reason?: string): string {
	return reason
		? `Reconnected to agent ${key}: ${reason}.`
		: `Reconnected to agent ${key} after its worker restarted; the session goes on from its last saved entry.`;
}
