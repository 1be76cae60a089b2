/**
 * The command line's modes as views of a daemon worker: `-p` (text), `--mode json`, and the line
 * chat (also what `attach` opens). They render the worker's events exactly as the in-process modes
 * render the session's, and send prompts, interrupts and `detach` as protocol commands.
 */
import { createInterface } from "node:readline";
import { ExitCode, type ExitCodeValue } from "../errors.js";
import type { QueuedInput, SessionEvent } from "../link/index.js";
import { type EndingSignal, onCtrlC, onEndingSignal } from "../modes/interrupts.js";
import { chatRunEnd, printRunEnd } from "../modes/run-end-lines.js";
import { TextRenderer, type TextStreams } from "../modes/text-renderer.js";
import type { Session } from "../session/index.js";
import { FollowedWorker } from "./followed-worker.js";
import type { WorkerPush, WorkerWelcome } from "./protocol.js";
import type { WorkerClient } from "./requests.js";
import type { Reconnect } from "./worker-link.js";

type RunEnd = Extract<WorkerPush, { type: "run_end" }>;

/** Render one worker event as print mode and the line chat do (answer text to `out`, progress to `err`). */
export function textEventRenderer(streams: TextStreams): (event: SessionEvent) => void {
	return new TextRenderer(streams).onEvent;
}

/** Wait for the `run_end` of request `id`, passing every event to `onEvent` meanwhile. */
function awaitRun(
	client: WorkerClient,
	id: number,
	onEvent: (event: SessionEvent) => void,
): Promise<RunEnd | { type: "bye"; reason: string }> {
	return new Promise((resolve) => {
		const stop = client.onPush((message) => {
			// Another client's run on this worker (its session was open there) is not this run's output.
			if (message.type === "event" && message.own !== false) onEvent(message.event as SessionEvent);
			else if (message.type === "run_end" && message.id === id) {
				stop();
				resolve(message as unknown as RunEnd);
			} else if (message.type === "bye") {
				stop();
				resolve({ type: "bye", reason: String(message.reason) });
			}
		});
		void client.closed.then(() => resolve({ type: "bye", reason: "the worker went away" }));
	});
}

/**
 * Ctrl-C in a one-shot view: each press is an `interrupt` command (the worker interrupts the
 * running cell first, then the run); a third press leaves at once, and the worker, its client gone,
 * stops the run with its kernels as in process. SIGTERM and SIGHUP stop the run at once (`onAction`
 * gets "run" and the signal): the view then reports its end with the resume hint, as in process; a
 * second one leaves at once.
 */
function remoteInterrupts(
	client: WorkerClient,
	onAction: (action: string, signal?: EndingSignal) => void,
	terminal?: NodeJS.ReadStream,
): () => void {
	let presses = 0;
	const ask = (stop: boolean, signal?: EndingSignal) =>
		void client.request({ type: "interrupt", ...(stop ? { stop } : {}) }).then((reply) => {
			if (reply.ok) onAction(String((reply.data as { action: string }).action), signal);
		});
	const press = () => {
		presses++;
		if (presses >= 3) process.exit(ExitCode.interrupted);
		ask(false);
	};
	const disposeSignals = onEndingSignal((signal) => ask(true, signal));
	const disposeCtrlC = onCtrlC(press, terminal);
	return () => {
		disposeSignals();
		disposeCtrlC();
	};
}

function workerGone(reason: string, welcome: WorkerWelcome): string {
	return `The agent's worker stopped before the run ended (${reason}). \`prime-agent agents\` shows its state; \`prime-agent attach ${welcome.key}\` continues the session.`;
}

/** `-p` through a worker: the answer on stdout, progress on stderr; the worker stops when the run has ended. */
export async function viewPrint(
	client: WorkerClient,
	welcome: WorkerWelcome,
	prompt: string,
	streams: TextStreams,
	terminal?: NodeJS.ReadStream,
): Promise<ExitCodeValue> {
	for (const notice of welcome.notices) streams.err.write(`${notice}\n`);
	const render = textEventRenderer(streams);
	const id = client.send({ type: "prompt", text: prompt, settle: true });
	const stopInterrupts = remoteInterrupts(
		client,
		(action, signal) =>
			streams.err.write(
				signal
					? `\nStopping (${signal})…\n`
					: action === "run"
						? "\nStopping…\n"
						: "\nInterrupting the running cell (press Ctrl-C again to stop)…\n",
			),
		terminal,
	);
	try {
		const end = await awaitRun(client, id, render);
		if (end.type === "bye") {
			streams.err.write(`${workerGone(end.reason, welcome)}\n`);
			return ExitCode.modelError;
		}
		printRunEnd(end, streams);
		await client.request({ type: "shutdown" });
		return end.exitCode as ExitCodeValue;
	} finally {
		stopInterrupts();
		client.close();
	}
}

/** `--mode json` through a worker: the same lines as in-process, then the worker stops. */
export async function viewJson(
	client: WorkerClient,
	welcome: WorkerWelcome,
	prompt: string,
	out: NodeJS.WritableStream,
): Promise<ExitCodeValue> {
	const line = (value: unknown) => out.write(`${JSON.stringify(value)}\n`);
	line(welcomeLine(welcome));
	const id = client.send({ type: "prompt", text: prompt, settle: true });
	// A signal's line is the in-process one: the run is stopped, as by a second Ctrl-C.
	const stopInterrupts = remoteInterrupts(client, (action, signal) =>
		line(signal ? { type: "interrupt", action: "exit", signal } : { type: "interrupt", action }),
	);
	try {
		const end = await awaitRun(client, id, line);
		if (end.type === "bye") {
			const message = workerGone(end.reason, welcome);
			line({ type: "result", status: "error", exitCode: ExitCode.modelError, message });
			return ExitCode.modelError;
		}
		line(end.result);
		await client.request({ type: "shutdown" });
		return end.exitCode as ExitCodeValue;
	} finally {
		stopInterrupts();
		client.close();
	}
}

/** The first line of `--mode json` through a worker: the in-process one, with the agent's key. */
function welcomeLine(welcome: WorkerWelcome): Record<string, unknown> {
	return {
		type: "session",
		id: welcome.session.id,
		path: welcome.session.path,
		cwd: welcome.session.cwd,
		model: welcome.model,
		resumed: welcome.resumed,
		notices: welcome.notices,
		agent: welcome.key,
	};
}

/** The entries `attach` replays: those after the leaf at the last detach (all of them when unknown). */
export async function replayLines(welcome: WorkerWelcome): Promise<string[]> {
	// The session code loads here, for `attach`: a new session's view does without it.
	const { entryLabel, Session } = await import("../session/index.js");
	let session: Session;
	try {
		session = Session.open(welcome.session.path, { upToDamage: true });
	} catch {
		return [];
	}
	const branch = session.branch();
	const from = welcome.detachedAt ? branch.findIndex((entry) => entry.id === welcome.detachedAt) + 1 : 0;
	return branch.slice(from).map((entry) => `${entry.id}  ${entryLabel(entry)}`);
}

const WAITS_FOR: Record<QueuedInput["kind"], string> = {
	steer: "after the current step",
	follow_up: "after this turn",
	prompt: "when the turn ends",
};

/** What the session holds queued (by any view, before or after a detach), one line each. */
export function queuedLines(queued: readonly QueuedInput[]): string[] {
	if (queued.length === 0) return [];
	return [
		`Queued (${queued.length}):`,
		...queued.map((input) => `  ${input.text.replace(/\s+/g, " ").trim()}  (${WAITS_FOR[input.kind]})`),
	];
}

/** What a line view says when the worker it follows goes, and when it is back. */
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

/** A run of this view that the worker's going ended. */
function runLostText(reason?: string): string {
	return reason
		? `The agent's worker stopped during this run: ${reason}.`
		: "The agent's worker stopped during this run; the supervisor restarts it from the session's last saved entry.";
}

/**
 * The line chat as a view (new sessions without a terminal UI, and `attach`): each line is a
 * prompt; Ctrl-C during a run interrupts; `/exit`, `/detach`, Ctrl-D or Ctrl-C at the prompt
 * detach, leaving the session running in its worker. With `reconnect`, a worker that crashes (or
 * is started again by another view) is followed to its restart, as the terminal UI follows it.
 */
export async function viewChat(
	first: WorkerClient,
	welcome: WorkerWelcome,
	input: NodeJS.ReadableStream,
	out: NodeJS.WritableStream,
	err: NodeJS.WritableStream,
	replay: boolean,
	reconnect?: Reconnect,
): Promise<ExitCodeValue> {
	const render = textEventRenderer({ out, err });
	err.write(`prime-agent · ${welcome.model} · ${welcome.session.cwd} · agent ${welcome.key}\n`);
	for (const notice of welcome.notices) err.write(`${notice}\n`);
	if (replay) {
		const lines = await replayLines(welcome);
		err.write(
			lines.length === 0
				? "Nothing happened while detached.\n"
				: `While detached (${lines.length} entr${lines.length === 1 ? "y" : "ies"}):\n${lines.map((line) => `  ${line}`).join("\n")}\n`,
		);
		if (welcome.running) err.write("The agent is working; its output follows.\n");
	}
	for (const line of queuedLines(welcome.status.queued)) err.write(`${line}\n`);
	err.write(
		"Type a message and press Enter. Ctrl-C interrupts a running cell; /exit detaches (the session keeps running).\n",
	);
	/** This view's prompts still running, by request id. */
	const ownRuns = new Set<number>();
	let bye: string | undefined;
	// `/exit` and Ctrl-C leave at once; the end of piped input first waits for the prompts it sent.
	let leaveNow = false;
	let runsDone: (() => void) | undefined;
	const rl = createInterface({
		input,
		output: out,
		terminal: Boolean((input as { isTTY?: boolean }).isTTY),
		prompt: "> ",
	});
	const endRun = (id: number) => {
		if (!ownRuns.delete(id) || ownRuns.size > 0) return;
		runsDone?.();
		rl.prompt();
	};
	const worker = new FollowedWorker(first, reconnect, {
		push: (message) => {
			if (message.type === "event") render(message.event as SessionEvent);
			else if (message.type === "run_end") {
				const end = message as unknown as RunEnd;
				chatRunEnd(end, err);
				endRun(end.id);
			}
		},
		reconnecting: (reason) => {
			if (ownRuns.size > 0) err.write(`\n${runLostText(reason)}\n`);
			err.write(`${reconnectingText(reason)}\n`);
			// Its runs ended with the worker; the prompt comes back once the chat has reconnected.
			ownRuns.clear();
			runsDone?.();
		},
		reconnected: (reason) => {
			err.write(`${reconnectedText(welcome.key, reason)}\n`);
			rl.prompt();
		},
		gone: (reason) => {
			bye = reason;
			rl.close();
			runsDone?.();
		},
	});
	const done = new Promise<void>((resolve) => rl.on("close", resolve));
	rl.on("SIGINT", () => {
		if (ownRuns.size === 0) {
			leaveNow = true;
			rl.close();
			return;
		}
		void worker.request({ type: "interrupt" }).then((reply) => {
			const action = reply.ok ? (reply.data as { action: string }).action : "";
			err.write(
				action === "cell" || action === "pending"
					? "\nInterrupting the running cell (Ctrl-C again stops the turn)…\n"
					: "\nStopping the turn…\n",
			);
		});
	});
	rl.on("line", (line) => {
		const text = line.trim();
		if (text === "/exit" || text === "/quit" || text === "/detach") {
			leaveNow = true;
			rl.close();
			return;
		}
		if (text === "") {
			rl.prompt();
			return;
		}
		if (worker.reconnecting) {
			err.write(`${reconnectingText()} Send it again once the chat says it has reconnected.\n`);
			return;
		}
		ownRuns.add(worker.send({ type: "prompt", text }));
	});
	rl.prompt();
	await done;
	if (!leaveNow && ownRuns.size > 0 && bye === undefined)
		await new Promise<void>((resolve) => {
			runsDone = resolve;
		});
	if (bye !== undefined) {
		err.write(`The agent's worker stopped: ${bye}.\n`);
		return ExitCode.ok;
	}
	await worker.leave();
	err.write(`${detachedText(welcome.key)}\n`);
	return ExitCode.ok;
}

function detachedText(key: string): string {
	return `Detached from agent ${key}; it keeps running. \`prime-agent attach ${key}\` comes back, \`prime-agent shutdown ${key}\` stops it.`;
}

/**
 * `attach --mode json`: the session as the lines `-p --mode json` prints, for scripts. The first
 * line describes the session (with `agent`, its key), then every event of the session, whoever
 * started the run, and a `result` line as each run ends. Each line read from `input` is a prompt;
 * when `input` ends, the view waits for its prompts' runs and detaches. A worker that restarts is
 * followed: a `reconnecting` line, then `reconnected` (a run of this view it ended gets an error
 * `result`); a worker that will not come back ends the view with a `bye` line.
 */
export async function viewAttachJson(
	first: WorkerClient,
	welcome: WorkerWelcome,
	input: NodeJS.ReadableStream,
	out: NodeJS.WritableStream,
	reconnect?: Reconnect,
): Promise<ExitCodeValue> {
	const line = (value: unknown) => out.write(`${JSON.stringify(value)}\n`);
	line(welcomeLine(welcome));
	const ownRuns = new Set<number>();
	let inputEnded = false;
	let finish!: (bye?: string) => void;
	const finished = new Promise<string | undefined>((resolve) => {
		finish = resolve;
	});
	const settle = () => {
		if (inputEnded && ownRuns.size === 0) finish();
	};
	const worker = new FollowedWorker(first, reconnect, {
		push: (message) => {
			if (message.type === "event") line(message.event);
			else if (message.type === "run_end") {
				line((message as unknown as RunEnd).result);
				if (ownRuns.delete(message.id as number)) settle();
			}
		},
		reconnecting: (reason) => {
			const lost = { type: "result", status: "error", exitCode: ExitCode.modelError, message: runLostText(reason) };
			for (let left = ownRuns.size; left > 0; left--) line(lost);
			ownRuns.clear();
			line({ type: "reconnecting", ...(reason ? { reason } : {}) });
			settle();
		},
		reconnected: (reason) => line({ type: "reconnected", ...(reason ? { reason } : {}) }),
		gone: (reason) => {
			line({ type: "bye", reason });
			finish(reason);
		},
	});
	const rl = createInterface({ input, terminal: false });
	rl.on("line", (text) => {
		if (text.trim() === "") return;
		if (worker.reconnecting) {
			const message = `${reconnectingText()} The prompt was not sent: send it again once a \`reconnected\` line has come.`;
			line({ type: "result", status: "error", exitCode: ExitCode.modelError, message });
			return;
		}
		ownRuns.add(worker.send({ type: "prompt", text: text.trim() }));
	});
	rl.on("close", () => {
		inputEnded = true;
		settle();
	});
	const bye = await finished;
	rl.close();
	if (bye === undefined) await worker.leave();
	return ExitCode.ok;
}
