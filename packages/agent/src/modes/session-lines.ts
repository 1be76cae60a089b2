/**
 * What a view says about the session besides its loop events: notices, sub-agents, goals,
 * autonomous runs, schedules and what code printed. Shared by the line views and the terminal UI.
 */
import { formatWithOptions } from "node:util";
import type { AutonomousEvent } from "../autonomous/index.js";
import type { ChildEvent } from "../children/index.js";
import type { GoalEvent } from "../goals/index.js";
import type { SessionNotice } from "../orchestrator/index.js";
import { describeChildEvent } from "./children.js";
import { describeAutonomousEvent, describeGoalEvent } from "./long-running-lines.js";
import { describeNotice } from "./notices.js";

const NOTICE_TYPES = new Set(["compaction_start", "compaction_end", "compaction_failed", "extension_problem"]);

/**
 * The line for `event` when it is one of those (`error`: a problem to show as one); undefined for
 * loop events and for events with nothing to say.
 */
export function describeSessionLine(
	event: { type: string } & Record<string, unknown>,
): { text: string; error: boolean } | undefined {
	const { type } = event;
	let text: string | undefined;
	let error = false;
	if (NOTICE_TYPES.has(type)) {
		text = describeNotice(event as unknown as SessionNotice);
		error = type === "compaction_failed";
	} else if (type.startsWith("child_")) text = describeChildEvent(event as unknown as ChildEvent);
	else if (type === "goal") text = describeGoalEvent(event as unknown as GoalEvent);
	else if (type.startsWith("autonomous_")) text = describeAutonomousEvent(event as unknown as AutonomousEvent);
	else if (type === "schedule_fired")
		text = `${event.kind === "heartbeat" ? "Heartbeat" : `Schedule ${String(event.id)}`} fired: ${String(event.text)}`;
	else if (type === "console") {
		text = String(event.text);
		error = event.level === "warn" || event.level === "error";
	}
	return text ? { text, error } : undefined;
}

/** Whether `event` is one `describeSessionLine` speaks for (not a loop event). */
export function isSessionLine(type: string): boolean {
	return (
		NOTICE_TYPES.has(type) ||
		type.startsWith("child_") ||
		type === "goal" ||
		type.startsWith("autonomous_") ||
		type === "schedule_fired" ||
		type === "console"
	);
}

/**
 * Send what code in this process prints through `console` to `onLine` (with `passThrough`, it is
 * printed too). Returns the undo.
 */
export function captureConsole(
	onLine: (text: string, level: "log" | "info" | "debug" | "warn" | "error") => void,
	passThrough = false,
): () => void {
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
