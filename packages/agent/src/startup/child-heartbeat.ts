import { join } from "node:path";
import type { ChildLaunchSpec } from "../children/index.js";
import type { AgentSession } from "../orchestrator/index.js";
import { Scheduler, scheduleHostHandlers } from "../schedules/index.js";
import type { SessionKernel } from "../tools/index.js";

/** The `customType` of the hidden message a sub-agent's heartbeat wakes it with. */
export const HEARTBEAT_MESSAGE_TYPE = "heartbeat";

/**
 * A sub-agent's heartbeat: `await rlm_heartbeat("5m", "...")` in its kernel wakes it with a
 * hidden message at each interval (its turn ends as any woken turn does, with a notice to its
 * parent when it does not reply), and keeps it in memory (a child with a heartbeat is not
 * evicted). Kept in its folder (`schedules.json`); stopped with its session.
 */
export function childHeartbeat(child: ChildLaunchSpec, kernel: SessionKernel, agentSession: AgentSession): Scheduler {
	const scheduler = new Scheduler({
		file: join(child.sessionDir, "schedules.json"),
		deliver: (job) =>
			agentSession.deliverExternal({ customType: HEARTBEAT_MESSAGE_TYPE, content: `[heartbeat] ${job.text}` }),
	});
	for (const [type, handler] of Object.entries(scheduleHostHandlers(scheduler))) kernel.onHostRequest(type, handler);
	scheduler.start();
	return scheduler;
}
