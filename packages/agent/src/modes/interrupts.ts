import { ExitCode } from "../errors.js";
import type { LinkInterrupt, SessionLink } from "../link/session-link.js";

/**
 * What a press did, as a one-shot view reports it: the link's answer (`cell`, `pending`: the cell
 * once its kernel runs it, `run`: the first press stopped the run, no cell running), or `exit`: a
 * later press, or SIGTERM/SIGHUP, stopped the run, and the view ends with it.
 */
export type InterruptAction = LinkInterrupt | "exit";

/** The signals that ask a run to end (`kill`, `timeout`, a closed terminal), not only its cell. */
const ENDING_SIGNALS = ["SIGTERM", "SIGHUP"] as const;
export type EndingSignal = (typeof ENDING_SIGNALS)[number];
const SIGNAL_NUMBERS: Record<EndingSignal, number> = { SIGTERM: 15, SIGHUP: 1 };

export interface InterruptHandle {
	/** One Ctrl-C; resolves with what it did. */
	press(): Promise<InterruptAction>;
	/** Remove the signal and key handlers (and restore the terminal). */
	dispose(): void;
}

/**
 * Ctrl-C during a one-shot run (`-p`, `--mode json`), in process or over a worker alike: the first
 * press interrupts the running cell (the model sees the interruption and carries on) or, when no
 * cell runs, stops the run; a second press stops the run; a third exits at once, in case stopping
 * hangs. In a terminal, Ctrl-C is read as a key (raw mode, so no SIGINT is raised); SIGINT sent
 * from elsewhere (`kill -INT`) counts the same.
 *
 * SIGTERM and SIGHUP (`kill`, `timeout`, a closed terminal) end the run at once, as a second press
 * does: the cell is interrupted, the session is saved as far as it got, and the run ends saying how
 * to resume it (`onAction` gets "exit" and the signal). A second one exits at once with the
 * signal's status (128 + its number).
 */
export function oneShotInterrupts(
	link: SessionLink,
	onAction: (action: InterruptAction, signal?: EndingSignal) => void,
	terminal?: NodeJS.ReadStream,
): InterruptHandle {
	let presses = 0;
	const press = async (): Promise<InterruptAction> => {
		presses++;
		if (presses >= 3) {
			dispose();
			process.exit(ExitCode.interrupted);
		}
		// A later press stops the run outright: the link counts presses per turn, and a one-shot run
		// can span several (a sub-agent's notice wakes the next), where a second press would only
		// interrupt the new turn's cell.
		const later = presses > 1;
		const answer = await link.interrupt(later);
		const action = later && answer === "run" ? "exit" : answer;
		onAction(action);
		return action;
	};
	const disposeSignals = onEndingSignal((signal) => {
		onAction("exit", signal);
		void link.interrupt(true).catch(() => {});
	});
	const disposeCtrlC = onCtrlC(() => void press().catch(() => {}), terminal);
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
