/** Heartbeats and schedules of a session hosted by a daemon worker (see `daemon/`). */

export { runHeartbeatCommand, runScheduleCommand } from "./commands.js";
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
