import type { ExitCodeValue } from "../errors.js";
import type { GoalEvent } from "../goals/index.js";
import type { StartedSession } from "../startup/index.js";
import { handleInterrupts } from "./interrupts.js";
import { goalStopOf } from "./long-running.js";
import { describeRunEnd } from "./run-end.js";
import { finishRun, onSessionLines, sessionLine } from "./run-result.js";

/**
 * `--mode json`: one JSON object per line on stdout, for scripts. The first line describes the
 * session (`type: "session"`), then every loop event as emitted by pi-agent-core, kernel status
 * lines (`type: "kernel_status"`), session notices (`compaction_start`, `compaction_end`,
 * `compaction_failed`, `extension_problem`), sub-agent progress (`child_spawned`, `child_finished`,
 * `child_notice`), and a last line `type: "result"` with the exit code.
 */
export async function runJsonMode(
	started: StartedSession,
	prompt: string,
	out: NodeJS.WritableStream,
): Promise<ExitCodeValue> {
	const line = (value: unknown) => out.write(`${JSON.stringify(value)}\n`);
	line(sessionLine(started));
	let goalStop: GoalEvent | undefined;
	const unsubscribe = onSessionLines(started, line, (event) => {
		goalStop = goalStopOf(event) ?? goalStop;
	});
	const stopped = new AbortController();
	const interrupts = handleInterrupts(started.agentSession, started.kernel, (action, signal) => {
		if (action !== "cell") stopped.abort();
		line(signal ? { type: "interrupt", action, signal } : { type: "interrupt", action });
	});
	try {
		const first = await started.agentSession.prompt(prompt);
		const { outcome, report } = await finishRun(started, first, stopped.signal, () => goalStop);
		line(describeRunEnd(started, outcome, report).result);
		return report.exitCode;
	} finally {
		interrupts.dispose();
		unsubscribe();
	}
}
