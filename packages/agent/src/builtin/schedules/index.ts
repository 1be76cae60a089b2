/**
 * `/heartbeat` and `/schedule` through the public extension API; a daemon worker loads this with
 * its session's scheduler (the schedules live in `src/schedules/`).
 */
import type { ExtensionFactory } from "../../extensions/api.js";
import { runHeartbeatCommand, runScheduleCommand, type Scheduler } from "../../schedules/index.js";

export const SCHEDULES_EXTENSION_NAME = "builtin:schedules";

export function schedulesExtension(scheduler: Scheduler): ExtensionFactory {
	return (api) => {
		api.registerCommand("heartbeat", {
			description: "show the heartbeat; /heartbeat <interval> [text], /heartbeat on (5m), /heartbeat off",
			handler: (args) => runHeartbeatCommand(args, scheduler),
		});
		api.registerCommand("schedule", {
			description: '/schedule in 30m|every 10m|at <ISO>|"<cron>" <prompt>; /schedule list; /schedule remove <id>',
			handler: (args) => runScheduleCommand(args, scheduler),
		});
	};
}
