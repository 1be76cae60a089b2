import type { WorkflowSync } from "prime-agent-context";
import type { SessionEntry } from "../../extensions/api.js";
import { contentText } from "./context-view.js";

/** The goal's custom entry (see the goals contract): the newest on the branch wins. */
export const GOAL_ENTRY_TYPE = "goal";
/** A sub-agent's usage entry on its parent's branch (written by the children registry). */
export const CHILD_USAGE_ENTRY_TYPE = "rlm_child_usage";
/** How a capsule or delta starts in a tool result the model saw. */
const CAPSULE_OPEN = "<prime_context_output ";

/**
 * What the workflow tracker learns from the active branch before a provider call: its user messages
 * (each taken in once, by entry id), the newest goal entry, the call itself with its context tokens,
 * and the sub-agents launched on it, each marked when its spawning entry came after the first
 * capsule the model was shown.
 */
export function workflowSyncOf(branch: readonly SessionEntry[], contextTokens: number): WorkflowSync {
	const userMessages: { id: string; text: string }[] = [];
	let goal: WorkflowSync["goal"] = null;
	let firstCapsule = -1;
	const position = new Map<string, number>();
	const launches: { id: string; spawnedBy: string | null; at: number }[] = [];
	branch.forEach((entry, index) => {
		position.set(entry.id, index);
		if (entry.type === "message" && entry.message.role === "user") {
			userMessages.push({ id: entry.id, text: contentText(entry.message.content) });
		} else if (entry.type === "message" && entry.message.role === "toolResult") {
			if (firstCapsule < 0 && contentText(entry.message.content).startsWith(CAPSULE_OPEN)) firstCapsule = index;
		} else if (entry.type === "custom" && entry.customType === GOAL_ENTRY_TYPE) {
			const data = entry.data as { id?: unknown; status?: unknown } | null;
			if (typeof data?.id === "string" && typeof data.status === "string") goal = { id: data.id, status: data.status };
		} else if (entry.type === "custom" && entry.customType === CHILD_USAGE_ENTRY_TYPE) {
			const data = entry.data as { rlm_child_id?: unknown; spawnedBy?: unknown } | null;
			if (typeof data?.rlm_child_id === "string") {
				launches.push({
					id: data.rlm_child_id,
					spawnedBy: typeof data.spawnedBy === "string" ? data.spawnedBy : null,
					at: index,
				});
			}
		}
	});
	const childLaunches = launches.map((launch) => {
		const spawnedAt = (launch.spawnedBy !== null ? position.get(launch.spawnedBy) : undefined) ?? launch.at;
		return { id: launch.id, afterCapsule: firstCapsule >= 0 && spawnedAt > firstCapsule };
	});
	return { userMessages, goal, contextTurn: { tokens: contextTokens }, childLaunches };
}
