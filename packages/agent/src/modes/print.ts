import type { ExitCodeValue } from "../errors.js";
import type { GoalEvent } from "../goals/index.js";
import type { StartedSession } from "../startup/index.js";
import { handleInterrupts } from "./interrupts.js";
import { describeActiveGoal, goalStopOf } from "./long-running.js";
import { describeRunEnd } from "./run-end.js";
import { printRunEnd } from "./run-end-lines.js";
import { finishRun, onSessionLines } from "./run-result.js";
import { TextRenderer, type TextStreams } from "./text-renderer.js";

/**
 * `-p text`: run one prompt to the end, stream the answer (or a slash command's) to stdout and
 * progress to stderr.
 * Ctrl-C interrupts the running cell first; a second Ctrl-C ends the run.
 */
export async function runPrintMode(
	started: StartedSession,
	prompt: string,
	streams: TextStreams,
	terminal?: NodeJS.ReadStream,
): Promise<ExitCodeValue> {
	const renderer = new TextRenderer(streams);
	for (const notice of started.notices) streams.err.write(`${notice}\n`);
	const activeGoal = describeActiveGoal(started);
	if (activeGoal) streams.err.write(`${activeGoal}\n`);
	// The lines a daemon worker's print view renders, through the same renderer.
	let goalStop: GoalEvent | undefined;
	const unsubscribe = onSessionLines(started, renderer.onEvent, (event) => {
		goalStop = goalStopOf(event) ?? goalStop;
	});
	const stopped = new AbortController();
	const interrupts = handleInterrupts(
		started.agentSession,
		started.kernel,
		(action, signal) => {
			if (action === "cell") streams.err.write("\nInterrupting the running cell (press Ctrl-C again to stop)…\n");
			else {
				stopped.abort();
				streams.err.write(signal ? `\nStopping (${signal})…\n` : "\nStopping…\n");
			}
		},
		terminal,
	);
	try {
		const first = await started.agentSession.prompt(prompt);
		const { outcome, report } = await finishRun(started, first, stopped.signal, () => goalStop);
		printRunEnd(describeRunEnd(started, outcome, report), streams);
		return report.exitCode;
	} finally {
		interrupts.dispose();
		unsubscribe();
	}
}
