/**
 * The command line's modes as views of a daemon worker: `-p` (text), `--mode json`, and the line
 * chat (also what `attach` opens). They render the worker's events exactly as the in-process modes
 * render the session's, and send prompts, interrupts and `detach` as protocol commands.
 */
import { createInterface } from "node:readline";
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import { ExitCode, type ExitCodeValue } from "../errors.js";
import { type EndingSignal, onCtrlC, onEndingSignal } from "../modes/interrupts.js";
import { describeSessionLine, isSessionLine } from "../modes/session-lines.js";
import { TextRenderer, type TextStreams } from "../modes/text-renderer.js";
import type { Session } from "../session/index.js";
import type { KernelStatus } from "../tools/index.js";
import type { ProtocolClient, WorkerPush, WorkerWelcome } from "./protocol.js";

type RunEnd = Extract<WorkerPush, { type: "run_end" }>;

/** Render one worker event as print mode and the line chat do (answer text to `out`, progress to `err`). */
export function textEventRenderer(streams: TextStreams): (event: Record<string, unknown>) => void {
	const renderer = new TextRenderer(streams);
	return (event) => {
		const line = event as { type: string } & Record<string, unknown>;
		if (line.type === "kernel_status") renderer.onKernelStatus(event as unknown as KernelStatus);
		else if (isSessionLine(line.type)) {
			const said = describeSessionLine(line);
			if (said) renderer.note(said.text);
		} else renderer.onEvent(event as unknown as AgentEvent);
	};
}

/** Wait for the `run_end` of request `id`, passing every event to `onEvent` meanwhile. */
function awaitRun(
	client: ProtocolClient,
	id: number,
	onEvent: (event: Record<string, unknown>) => void,
): Promise<RunEnd | { type: "bye"; reason: string }> {
	return new Promise((resolve) => {
		const stop = client.onPush((message) => {
			// Another client's run on this worker (its session was open there) is not this run's output.
			if (message.type === "event" && message.own !== false) onEvent(message.event as Record<string, unknown>);
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
	client: ProtocolClient,
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
	client: ProtocolClient,
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
		if (end.message) streams.err.write(`${end.refused ? "Error: " : ""}${end.message}\n`);
		else if (end.commandMessage) streams.out.write(`${end.commandMessage}\n`);
		await client.request({ type: "shutdown" });
		return end.exitCode as ExitCodeValue;
	} finally {
		stopInterrupts();
		client.close();
	}
}

/** `--mode json` through a worker: the same lines as in-process, then the worker stops. */
export async function viewJson(
	client: ProtocolClient,
	welcome: WorkerWelcome,
	prompt: string,
	out: NodeJS.WritableStream,
): Promise<ExitCodeValue> {
	const line = (value: unknown) => out.write(`${JSON.stringify(value)}\n`);
	line({
		type: "session",
		id: welcome.session.id,
		path: welcome.session.path,
		cwd: welcome.session.cwd,
		model: welcome.model,
		resumed: welcome.resumed,
		notices: welcome.notices,
		agent: welcome.key,
	});
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

/**
 * The line chat as a view (new sessions without a terminal UI, and `attach`): each line is a
 * prompt; Ctrl-C during a run interrupts; `/exit`, `/detach`, Ctrl-D or Ctrl-C at the prompt
 * detach, leaving the session running in its worker.
 */
export async function viewChat(
	client: ProtocolClient,
	welcome: WorkerWelcome,
	input: NodeJS.ReadableStream,
	out: NodeJS.WritableStream,
	err: NodeJS.WritableStream,
	replay: boolean,
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
	err.write(
		"Type a message and press Enter. Ctrl-C interrupts a running cell; /exit detaches (the session keeps running).\n",
	);
	let ownRuns = 0;
	let bye: string | undefined;
	// `/exit` and Ctrl-C leave at once; the end of piped input first waits for the prompts it sent.
	let leaveNow = false;
	let runsDone: (() => void) | undefined;
	client.onPush((message) => {
		if (message.type === "event") render(message.event as Record<string, unknown>);
		else if (message.type === "run_end") {
			const end = message as unknown as RunEnd;
			if (end.status === "error" && end.message) err.write(`${end.message}\n`);
			else if (end.commandMessage) err.write(`${end.commandMessage}\n`);
			if (end.status === "aborted") err.write("Turn stopped.\n");
		} else if (message.type === "bye") bye = String(message.reason);
	});
	const rl = createInterface({
		input,
		output: out,
		terminal: Boolean((input as { isTTY?: boolean }).isTTY),
		prompt: "> ",
	});
	const done = new Promise<void>((resolve) => rl.on("close", resolve));
	void client.closed.then(() => rl.close());
	rl.on("SIGINT", () => {
		if (ownRuns === 0) {
			leaveNow = true;
			rl.close();
			return;
		}
		void client.request({ type: "interrupt" }).then((reply) => {
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
		ownRuns++;
		const id = client.send({ type: "prompt", text });
		const stop = client.onPush((message) => {
			if (message.type === "run_end" && message.id === id) {
				stop();
				ownRuns--;
				if (ownRuns === 0) {
					runsDone?.();
					rl.prompt();
				}
			}
		});
	});
	rl.prompt();
	await done;
	if (!leaveNow && ownRuns > 0 && bye === undefined)
		await new Promise<void>((resolve) => {
			runsDone = resolve;
			void client.closed.then(() => resolve());
		});
	if (bye !== undefined) {
		err.write(`The agent's worker stopped: ${bye}.\n`);
		return ExitCode.ok;
	}
	await client.request({ type: "detach" });
	client.close();
	err.write(
		`Detached from agent ${welcome.key}; it keeps running. \`prime-agent attach ${welcome.key}\` comes back, \`prime-agent shutdown ${welcome.key}\` stops it.\n`,
	);
	return ExitCode.ok;
}
