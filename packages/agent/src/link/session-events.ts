/**
 * Everything a view of a session hears, as one closed union: a view that switches on `type` is
 * told by the compiler when an event is added that it does not describe.
 */
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { AutonomousEvent } from "../autonomous/index.js";
import type { ChildEvent } from "../children/index.js";
import type { GoalEvent } from "../goals/index.js";
import type { RunOutcome, SessionNotice } from "../orchestrator/index.js";
import type { KernelStatus } from "../tools/index.js";

/**
 * How a run ended, as a view reports it (`describeRunEnd` describes every run's end the same way,
 * in process and in a daemon worker).
 */
export interface LinkRunEnd {
	status: RunOutcome["status"];
	/** The exit code `-p` ends with for this run. */
	exitCode: number;
	/** What happened and what to do next, as `-p` says it; absent when the run succeeded. */
	message?: string;
	/** The run was refused with a user error (no key, bad input): print mode says `Error: ` first. */
	refused?: true;
	/** The `result` line of `--mode json`, where the session that ran it describes it. */
	result?: Record<string, unknown>;
	/** What a slash command answered. */
	commandMessage?: string;
	/** Why it failed, when no answer was given that shows it. */
	errorMessage?: string;
	/** The prompt never reached the session (its worker was away): nothing ran. */
	notSent?: boolean;
}

/** The session's kernel started, restarted, failed, or a cell left running ended. */
export type KernelStatusEvent = { type: "kernel_status" } & KernelStatus;

/** What code in a worker printed with `console` (an extension's command or hook). */
export type ConsoleLevel = "log" | "info" | "debug" | "warn" | "error";

/**
 * The lines `--mode json` prints between its `session` and `result` lines: the loop's events as
 * pi-agent-core emits them, kernel status, session notices (compaction, extension problems),
 * sub-agent progress, goal and autonomous events.
 */
export type SessionLine = AgentEvent | KernelStatusEvent | SessionNotice | ChildEvent | GoalEvent | AutonomousEvent;

/** What a link adds to the session's lines (see `SessionEvent`). */
export type LinkOwnEvent =
	| { type: "status" }
	| ({ type: "run_end" } & LinkRunEnd)
	| { type: "still_busy"; question: number }
	| { type: "still_busy_answered"; question: number; choice: "wait" | "restart" }
	| { type: "branched"; leafId: string | null }
	| { type: "schedule_fired"; id: string; kind: "schedule" | "heartbeat"; text: string }
	| { type: "console"; level: ConsoleLevel; text: string }
	| { type: "reconnecting"; reason?: string }
	| { type: "reconnected"; reason?: string }
	| { type: "bye"; reason: string };

/**
 * What a view hears: the session's lines (`SessionLine`), plus:
 * - `status`: the state changed (read it with `status()`);
 * - `run_end` (`LinkRunEnd` fields): a run this view did not start ended (a woken turn, a
 *   schedule, another view's prompt, a queued one: `queue`);
 * - `still_busy` (`question`): a cell ignored the interrupt; answer with `answerStillBusy`;
 * - `still_busy_answered` (`question`, `choice`): a view answered it (others close their question);
 * - `branched` (`leafId`): a view moved the conversation to another entry (`branch`);
 * - `schedule_fired`: a heartbeat or schedule delivered its prompt;
 * - `console` (`level`, `text`): what code in a worker printed (an extension's command or hook);
 * - `reconnecting`, then `reconnected`: the session's worker died and this view follows it to the
 *   worker the supervisor restarts (the conversation is read again);
 * - `bye` (`reason`): the session went away (its worker stopped, or will not come back).
 */
export type SessionEvent = SessionLine | LinkOwnEvent;

/** Events that are neither the loop's nor a link's: what `describeSessionLine` speaks for. */
export type SessionSideEvent = Exclude<SessionEvent, AgentEvent | KernelStatusEvent | LinkOwnEvent> | SideLinkEvent;

/** The link's own events that are shown as a line (the others change a view's state). */
type SideLinkEvent = Extract<LinkOwnEvent, { type: "schedule_fired" | "console" }>;

/**
 * The end of an exhaustive switch over events: it fails to compile while an event is left out. At
 * run time an event no case knows (from a newer worker) is skipped.
 */
export function unknownEvent(_event: never): undefined {
	return undefined;
}
