import { sessionUsage } from "../children/index.js";
import type { ExitCodeValue } from "../errors.js";
import type { GoalEvent } from "../goals/index.js";
import type { StartedSession } from "../startup/index.js";
import { settleChildren } from "./children.js";
import { handleInterrupts } from "./interrupts.js";
import { goalStopOf, longRunningOutcome, onLongRunningEvents } from "./long-running.js";
import { describeOutcome } from "./outcome.js";

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
	line({
		type: "session",
		id: started.session.id,
		path: started.session.path,
		cwd: started.session.cwd,
		model: `${started.model.provider}/${started.model.id}`,
		resumed: started.resumed,
		notices: started.notices,
	});
	const unsubscribe = started.agentSession.subscribe(line);
	const unstatus = started.onKernelStatus((status) => line({ type: "kernel_status", ...status }));
	const unnotice = started.agentSession.onNotice((notice) => line(notice));
	const unchild = started.onChildEvent(line);
	let goalStop: GoalEvent | undefined;
	const unlong = onLongRunningEvents(started, (event) => {
		goalStop = goalStopOf(event) ?? goalStop;
		line(event);
	});
	const stopped = new AbortController();
	const interrupts = handleInterrupts(started.agentSession, started.kernel, (action) => {
		if (action !== "cell") stopped.abort();
		line({ type: "interrupt", action });
	});
	try {
		let outcome = await started.agentSession.prompt(prompt);
		// The run ends when the root is idle, every sub-agent has settled and its notice was handled.
		// A command may have started work too (`/goal` in a session with a conversation).
		if (outcome.status === "ok" && (!outcome.command || started.agentSession.busy))
			outcome = (await settleChildren(started, stopped.signal)) ?? outcome;
		const report = longRunningOutcome(started, outcome, describeOutcome(outcome, started), goalStop);
		line({
			type: "result",
			status: outcome.status,
			exitCode: report.exitCode,
			...(report.message ? { message: report.message } : {}),
			...(outcome.command ? { command: outcome.command } : {}),
			sessionPersisted: started.session.persisted,
			// Tokens and cost of this session's answers, of its sub-agents, and both.
			usage: sessionUsage(started.session.entries),
			// The session's goal after the run (null: none), and the autonomous run's report.
			goal: started.goals.current() ?? null,
			...(report.autonomous ? { autonomous: report.autonomous } : {}),
		});
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
