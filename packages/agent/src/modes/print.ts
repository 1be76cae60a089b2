import type { ExitCodeValue } from "../errors.js";
import type { GoalEvent } from "../goals/index.js";
import type { StartedSession } from "../startup/index.js";
import { describeChildEvent } from "./children.js";
import { handleInterrupts } from "./interrupts.js";
import {
	describeActiveGoal,
	describeAutonomousEvent,
	describeGoalEvent,
	goalStopOf,
	onLongRunningEvents,
} from "./long-running.js";
import { describeNotice } from "./notices.js";
import { finishRun } from "./run-result.js";
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
	const unsubscribe = started.agentSession.subscribe(renderer.onEvent);
	const unstatus = started.onKernelStatus(renderer.onKernelStatus);
	const unnotice = started.agentSession.onNotice((notice) => {
		const text = describeNotice(notice);
		if (text) renderer.note(text);
	});
	const unchild = started.onChildEvent((event) => renderer.note(describeChildEvent(event)));
	let goalStop: GoalEvent | undefined;
	const unlong = onLongRunningEvents(started, (event) => {
		goalStop = goalStopOf(event) ?? goalStop;
		const text = event.type === "goal" ? describeGoalEvent(event) : describeAutonomousEvent(event);
		if (text) renderer.note(text);
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
		if (report.message) streams.err.write(`${report.message}\n`);
		// A command's answer is its output, as the model's answer is (`-p "/pc status" > status.txt`).
		else if (outcome.command?.message) streams.out.write(`${outcome.command.message}\n`);
		return report.exitCode;
	} finally {
		interrupts.dispose();
		unsubscribe();
		unstatus();
		unnotice();
		unchild();
		unlong();
	}
}
