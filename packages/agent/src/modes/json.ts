import { createInterface } from "node:readline";
import { ExitCode, type ExitCodeValue } from "../errors.js";
import type { LinkRunEnd, SessionEvent } from "../link/session-events.js";
import type { SessionLink } from "../link/session-link.js";
import { oneShotInterrupts } from "./interrupts.js";

/**
 * `--mode json`, in process or over a worker: one JSON object per line on `out`, for scripts. The
 * first line describes the session (`type: "session"`), then every loop event as emitted by
 * pi-agent-core, kernel status lines (`type: "kernel_status"`), session notices
 * (`compaction_start`, `compaction_end`, `compaction_failed`, `extension_problem`), sub-agent
 * progress (`child_spawned`, `child_finished`, `child_notice`), goal and autonomous events, an
 * `interrupt` line for each Ctrl-C or ending signal, and a last line `type: "result"` with the exit
 * code. The caller closes the link.
 */
export async function jsonMode(link: SessionLink, prompt: string, out: NodeJS.WritableStream): Promise<ExitCodeValue> {
	const line = jsonLines(out);
	line(sessionLine(link));
	const unsubscribe = link.subscribe((event) => {
		if (event.type === "still_busy") link.answerStillBusy("restart", event.question);
		else if (isJsonLine(event)) line(event);
	});
	const interrupts = oneShotInterrupts(link, (action, signal) =>
		line(signal ? { type: "interrupt", action, signal } : { type: "interrupt", action }),
	);
	try {
		const end = await link.prompt(prompt, { settle: true });
		line(resultOf(end));
		return end.exitCode as ExitCodeValue;
	} finally {
		interrupts.dispose();
		unsubscribe();
	}
}

/**
 * `attach --mode json`: the session as the lines `-p --mode json` prints, for scripts. The first
 * line describes the session (with `agent`, its key), then every event of the session, whoever
 * started the run, and a `result` line as each run ends. Each line read from `input` is a prompt;
 * when `input` ends, the view waits for its prompts' runs and leaves (the caller closes the link).
 * A worker that restarts is followed: a `reconnecting` line, then `reconnected` (a run of this view
 * it ended gets an error `result`); a worker that will not come back ends the view with a `bye` line.
 */
export async function attachJsonMode(
	link: SessionLink,
	input: NodeJS.ReadableStream,
	out: NodeJS.WritableStream,
): Promise<ExitCodeValue> {
	const line = jsonLines(out);
	line(sessionLine(link));
	const ownRuns = new Set<Promise<unknown>>();
	let gone!: () => void;
	const bye = new Promise<void>((resolve) => {
		gone = resolve;
	});
	const unsubscribe = link.subscribe((event) => {
		if (event.type === "run_end") line(resultOf(event));
		else if (event.type === "bye") {
			line(event);
			gone();
		} else if (isJsonLine(event) || event.type === "reconnecting" || event.type === "reconnected") line(event);
	});
	const rl = createInterface({ input, terminal: false });
	rl.on("line", (text) => {
		if (text.trim() === "") return;
		const run = link.prompt(text.trim()).then((end) => {
			line(resultOf(end));
			ownRuns.delete(run);
		});
		ownRuns.add(run);
	});
	const inputEnded = new Promise<void>((resolve) => rl.on("close", resolve));
	try {
		await Promise.race([bye, inputEnded.then(() => waitForAll(ownRuns))]);
	} finally {
		rl.close();
		unsubscribe();
	}
	return ExitCode.ok;
}

/** Until every promise in `runs` has settled, those added meanwhile included. */
async function waitForAll(runs: Set<Promise<unknown>>): Promise<void> {
	while (runs.size > 0) await Promise.allSettled([...runs]);
}

function jsonLines(out: NodeJS.WritableStream): (value: unknown) => void {
	return (value) => out.write(`${JSON.stringify(value)}\n`);
}

/** The first line: the session, and the agent's key when it runs in a worker. */
function sessionLine(link: SessionLink): Record<string, unknown> {
	const { session, model } = link.status();
	return {
		type: "session",
		id: session.id,
		path: session.path,
		cwd: session.cwd,
		model: `${model.provider}/${model.id}`,
		resumed: link.resumed,
		notices: link.notices,
		...(link.agentKey ? { agent: link.agentKey } : {}),
	};
}

/** The `result` line of a run's end (the session's own, or, for a run that never got there, its failure). */
function resultOf(end: LinkRunEnd): Record<string, unknown> {
	return (
		end.result ?? {
			type: "result",
			status: end.status,
			exitCode: end.exitCode,
			...(end.message ? { message: end.message } : {}),
		}
	);
}

/**
 * The events JSON lines show: the session's (loop, kernel, notices, sub-agents, goals) and what
 * happened to it (a schedule fired, code printed, a view answered a question or moved the
 * conversation); not the view's own state (`status`, a question, a run's end: its `result` line,
 * the worker's restart).
 */
function isJsonLine(event: SessionEvent): boolean {
	switch (event.type) {
		case "status":
		case "run_end":
		case "still_busy":
		case "reconnecting":
		case "reconnected":
		case "bye":
			return false;
		default:
			return true;
	}
}
