import type { HostRequestHandler } from "prime-agent-kernel";
import type { Scheduler } from "./scheduler.js";
import { DEFAULT_HEARTBEAT_MS, formatDuration, parseDuration, ScheduleError } from "./when.js";

/** The host request of the kernel's `rlm_heartbeat(...)`. */
export const HEARTBEAT_REQUEST = "schedules.heartbeat";

/**
 * `await rlm_heartbeat("5m", "check the build")` sets the session's heartbeat (the root's lives in
 * its daemon worker, a sub-agent's in its session) (an interval string
 * or seconds; default 5 minutes, at least 10 s); `await rlm_heartbeat(None)` stops it.
 */
export function scheduleHostHandlers(scheduler: Scheduler): Record<string, HostRequestHandler> {
	return {
		[HEARTBEAT_REQUEST]: (payload) => {
			if (payload.stop === true) return { stopped: scheduler.clearHeartbeat() };
			const interval = payload.interval;
			const ms =
				interval === undefined || interval === null
					? DEFAULT_HEARTBEAT_MS
					: typeof interval === "number"
						? interval * 1000
						: parseDuration(String(interval));
			if (ms === undefined)
				throw new ScheduleError(
					`rlm_heartbeat(${JSON.stringify(interval)}): write the interval as "5m", "90s" or seconds.`,
				);
			const text = typeof payload.text === "string" ? payload.text : undefined;
			const job = scheduler.setHeartbeat(ms, text);
			return { id: job.id, every: formatDuration(ms), next: job.nextRunAt };
		},
	};
}
