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

/**
 * Ctrl-C during a run: the first press interrupts the running cell (the model sees the
 * interruption and carries on) or, when no cell runs, aborts the run; a second press during the
 * same run aborts it and asks to exit; a third exits at once, in case stopping hangs.
 *
 * In a terminal, Ctrl-C is read as a key (raw mode), so no SIGINT is raised at all; SIGINT sent
 * from elsewhere (`kill -INT`) is handled the same way.
 */
export function handleInterrupts(
	agentSession: AgentSession,
	kernel: SessionKernel,
	onInterrupt: (action: InterruptAction) => void,
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
	const dispose = onCtrlC(() => void press(), terminal);
	return { press, dispose };
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
