/**
 * Heartbeats and schedules: the root session's are hosted by its daemon worker (see `daemon/`); a
 * sub-agent's heartbeat (`rlm_heartbeat` in its kernel) lives in its session.
 */

export { runHeartbeatCommand, runScheduleCommand } from "./commands.js";
export { HEARTBEAT_REQUEST, scheduleHostHandlers } from "./host-requests.js";
export {
	DEFAULT_HEARTBEAT_TEXT,
	describeJobs,
	parseHeartbeatArgs,
	parseScheduleArgs,
	type ScheduleDelivery,
	type ScheduleJob,
	Scheduler,
	type SchedulerOptions,
} from "./scheduler.js";
export {
	DEFAULT_HEARTBEAT_MS,
	describeWhen,
	formatDuration,
	MIN_INTERVAL_MS,
	nextRun,
	parseDuration,
	parseWhen,
	ScheduleError,
	type When,
} from "./when.js";
