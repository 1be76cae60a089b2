import type { ExitCodeValue } from "../errors.js";
import type { SessionLink } from "../link/session-link.js";
import { type InterruptAction, oneShotInterrupts } from "./interrupts.js";
import { printRunEnd } from "./run-end-lines.js";
import { TextRenderer, type TextStreams } from "./text-renderer.js";

/**
 * `-p text`, in process or over a worker: run one prompt to the end (its sub-agents settled), the
 * answer (or a slash command's) streamed to `out` and progress to `err`. Ctrl-C interrupts the
 * running cell first; a second Ctrl-C ends the run. A cell that ignores an interrupt is restarted
 * (nobody is asked). Resolves with the exit code the run ends with; the caller closes the link.
 */
export async function printMode(
	link: SessionLink,
	prompt: string,
	streams: TextStreams,
	terminal?: NodeJS.ReadStream,
): Promise<ExitCodeValue> {
	for (const notice of link.notices) streams.err.write(`${notice}\n`);
	const renderer = new TextRenderer(streams);
	const unsubscribe = link.subscribe((event) => {
		if (event.type === "still_busy") link.answerStillBusy("restart", event.question);
		else renderer.onEvent(event);
	});
	const interrupts = oneShotInterrupts(link, (action, signal) => streams.err.write(stopping(action, signal)), terminal);
	try {
		const end = await link.prompt(prompt, { settle: true });
		printRunEnd(end, streams);
		return end.exitCode as ExitCodeValue;
	} finally {
		interrupts.dispose();
		unsubscribe();
	}
}

/** What print mode says when Ctrl-C or a signal reaches it. */
function stopping(action: InterruptAction, signal?: string): string {
	if (signal) return `\nStopping (${signal})…\n`;
	if (action === "cell" || action === "pending")
		return "\nInterrupting the running cell (press Ctrl-C again to stop)…\n";
	return "\nStopping…\n";
}
