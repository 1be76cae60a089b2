import { ExitCode } from "../errors.js";
import type { AgentSession } from "../orchestrator/index.js";
import type { SessionKernel } from "../tools/index.js";

export type InterruptAction = "cell" | "run" | "exit";

export interface InterruptHandle {
	/** What one Ctrl-C does; returns the action taken. */
	press(): InterruptAction;
	/** Remove the signal and key handlers (and restore the terminal). */
	dispose(): void;
}

/** The signals that ask a run to end (`kill`, `timeout`, a closed terminal), not only its cell. */
const ENDING_SIGNALS = ["SIGTERM", "SIGHUP"] as const;
export type EndingSignal = (typeof ENDING_SIGNALS)[number];
const SIGNAL_NUMBERS: Record<EndingSignal, number> = { SIGTERM: 15, SIGHUP: 1 };

/**
 * Ctrl-C during a run: the first press interrupts the running cell (the model sees the
 * interruption and carries on) or, when no cell runs, aborts the run; a second press during the
 * same run aborts it and asks to exit; a third exits at once, in case stopping hangs.
 *
 * In a terminal, Ctrl-C is read as a key (raw mode), so no SIGINT is raised at all; SIGINT sent
 * from elsewhere (`kill -INT`) is handled the same way.
 *
 * SIGTERM and SIGHUP (`kill`, `timeout`, a closed terminal) end the run at once, as a second press
 * does: the cell is interrupted, the session is saved as far as it got, and the run ends saying how
 * to resume it (`onInterrupt` gets "exit" and the signal). A second one exits at once with the
 * signal's status (128 + its number), in case stopping hangs.
 */
export function handleInterrupts(
	agentSession: AgentSession,
	kernel: SessionKernel,
	onInterrupt: (action: InterruptAction, signal?: EndingSignal) => void,
	terminal?: NodeJS.ReadStream,
): InterruptHandle {
	let presses = 0;
	const press = (): InterruptAction => {
		presses++;
		if (presses >= 3) {
			dispose();
			process.exit(ExitCode.interrupted);
		}
		let action: InterruptAction;
		if (presses === 1 && kernel.interruptCell()) action = "cell";
		else {
			agentSession.abort();
			action = presses === 1 ? "run" : "exit";
		}
		onInterrupt(action);
		return action;
	};
	const disposeSignals = onEndingSignal((signal) => {
		kernel.interruptCell();
		agentSession.abort();
		onInterrupt("exit", signal);
	});
	const disposeCtrlC = onCtrlC(() => void press(), terminal);
	const dispose = () => {
		disposeSignals();
		disposeCtrlC();
	};
	return { press, dispose };
}

/**
 * Calls `end` on the first SIGTERM or SIGHUP (the caller stops its run and says how to resume); a
 * second one exits at once with the signal's status (128 + its number), in case stopping hangs.
 * Returns the function that removes the handlers.
 */
export function onEndingSignal(end: (signal: EndingSignal) => void): () => void {
	let ended = false;
	const handlers = ENDING_SIGNALS.map(
		(signal) =>
			[
				signal,
				() => {
					if (ended) process.exit(128 + SIGNAL_NUMBERS[signal]);
					ended = true;
					end(signal);
				},
			] as const,
	);
	for (const [signal, handler] of handlers) process.on(signal, handler);
	return () => {
		for (const [signal, handler] of handlers) process.off(signal, handler);
	};
}

/**
 * Call `press` on each Ctrl-C: SIGINT, and in a terminal Ctrl-C read as a key (raw mode, so no
 * SIGINT is raised at all). Returns the function that removes the handlers and restores the terminal.
 */
export function onCtrlC(press: () => void, terminal?: NodeJS.ReadStream): () => void {
	process.on("SIGINT", press);
	const tty = terminal?.isTTY ? terminal : undefined;
	const onData = (data: Buffer) => {
		if (data.includes(0x03)) press();
	};
	if (tty) {
		tty.setRawMode(true);
		tty.on("data", onData);
		tty.resume();
	}
	return () => {
		process.off("SIGINT", press);
		if (tty) {
			tty.off("data", onData);
			tty.setRawMode(false);
			tty.pause();
		}
	};
}
