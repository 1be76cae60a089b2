/**
 * What a view says about the session besides its loop events: notices, sub-agents, goals,
 * autonomous runs, schedules and what code printed. Shared by the line views and the terminal UI.
 */
import { formatWithOptions } from "node:util";
import { type ConsoleLevel, type SessionEvent, type SessionSideEvent, unknownEvent } from "../link/session-events.js";
import { describeChildEvent } from "./children.js";
import { describeAutonomousEvent, describeGoalEvent } from "./long-running-lines.js";
import { describeNotice } from "./notices.js";

/**
 * The line for `event` (`error`: a problem to show as one); undefined for an event with nothing
 * to say (the end of a `/compact` the user typed, the end of an autonomous run).
 */
export function describeSessionLine(event: SessionSideEvent): { text: string; error: boolean } | undefined {
	let text: string | undefined;
	let error = false;
	switch (event.type) {
		case "compaction_start":
		case "compaction_end":
		case "compaction_failed":
		case "extension_problem":
			text = describeNotice(event);
			error = event.type === "compaction_failed";
			break;
		case "child_spawned":
		case "child_finished":
		case "child_notice":
		case "child_residency":
			text = describeChildEvent(event);
			break;
		case "goal":
			text = describeGoalEvent(event);
			break;
		case "autonomous_gate":
		case "autonomous_continue":
		case "autonomous_end":
			text = describeAutonomousEvent(event);
			break;
		case "schedule_fired":
			text = `${event.kind === "heartbeat" ? "Heartbeat" : `Schedule ${event.id}`} fired: ${event.text}`;
			break;
		case "console":
			text = event.text;
			error = event.level === "warn" || event.level === "error";
			break;
		default:
			return unknownEvent(event);
	}
	return text ? { text, error } : undefined;
}

/**
 * Whether `event` is one `describeSessionLine` speaks for: not a loop event, nor kernel status,
 * nor one of the link's events that change a view's state.
 */
export function isSessionLine(event: SessionEvent): event is SessionSideEvent {
	switch (event.type) {
		case "compaction_start":
		case "compaction_end":
		case "compaction_failed":
		case "extension_problem":
		case "child_spawned":
		case "child_finished":
		case "child_notice":
		case "child_residency":
		case "goal":
		case "autonomous_gate":
		case "autonomous_continue":
		case "autonomous_end":
		case "schedule_fired":
		case "console":
			return true;
		case "agent_start":
		case "agent_end":
		case "turn_start":
		case "turn_end":
		case "message_start":
		case "message_update":
		case "message_end":
		case "tool_execution_start":
		case "tool_execution_update":
		case "tool_execution_end":
		case "kernel_status":
		case "status":
		case "run_end":
		case "still_busy":
		case "still_busy_answered":
		case "branched":
		case "reconnecting":
		case "reconnected":
		case "bye":
			return false;
		default:
			return unknownEvent(event) ?? false;
	}
}

/**
 * Send what code in this process prints through `console` to `onLine` (with `passThrough`, it is
 * printed too). Returns the undo.
 */
export function captureConsole(onLine: (text: string, level: ConsoleLevel) => void, passThrough = false): () => void {
	const methods = ["log", "info", "debug", "warn", "error"] as const;
	const saved = methods.map((name) => [name, console[name]] as const);
	for (const [name, original] of saved)
		console[name] = (...args: unknown[]) => {
			if (passThrough) original(...args);
			onLine(formatWithOptions({ colors: false }, ...args), name);
		};
	return () => {
		for (const [name, original] of saved) console[name] = original;
	};
}
