import { describeJobs, parseHeartbeatArgs, parseScheduleArgs, type Scheduler } from "./scheduler.js";
import { describeWhen, formatDuration } from "./when.js";

/** `/heartbeat`, `/heartbeat on|off`, `/heartbeat <interval> [text]`; returns the answer shown to the user. */
export function runHeartbeatCommand(args: string, scheduler: Scheduler): string {
	const parsed = parseHeartbeatArgs(args);
	if (parsed.action === "off") return scheduler.clearHeartbeat() ? "Heartbeat stopped." : "No heartbeat was set.";
	if (parsed.action === "show") {
		const beat = scheduler.heartbeat;
		return beat && beat.when.kind === "every"
			? `Heartbeat every ${formatDuration(beat.when.ms)} (next ${beat.nextRunAt}): ${beat.text}`
			: "No heartbeat. Set one with /heartbeat 5m [text] (/heartbeat on: every 5 minutes).";
	}
	const job = scheduler.setHeartbeat(parsed.ms, parsed.text);
	return `Heartbeat every ${formatDuration(parsed.ms)}, next at ${job.nextRunAt}. /heartbeat off stops it.`;
}

/** `/schedule list`, `/schedule remove <id>`, `/schedule [--steer] <when> <prompt>`. */
export function runScheduleCommand(args: string, scheduler: Scheduler): string {
	const parsed = parseScheduleArgs(args);
	if (parsed.action === "list") return describeJobs(scheduler.list());
	if (parsed.action === "remove") {
		const job = scheduler.remove(parsed.id);
		return job
			? `Removed ${job.kind} ${job.id}.`
			: `No schedule ${parsed.id} (or the prefix names more than one); /schedule list shows the ids.`;
	}
	const job = scheduler.add(parsed.when, parsed.text, parsed.delivery);
	return `Scheduled ${job.id} ${describeWhen(job.when)} as a ${job.delivery.replace("_", "-")}, next at ${job.nextRunAt}.`;
}
