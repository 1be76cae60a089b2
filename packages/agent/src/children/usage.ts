import type { Usage } from "@mariozechner/pi-ai";
import type { SessionEntry } from "../session/index.js";

/** The custom entry on the parent's branch carrying a child's usage (never sent to the model). */
export const CHILD_USAGE_ENTRY = "rlm_child_usage";

export function emptyUsage(): Usage {
	return {
		input: 0,
		output: 0,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: 0,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	};
}

export function addUsage(total: Usage, usage: Usage): void {
	total.input += usage.input;
	total.output += usage.output;
	total.cacheRead += usage.cacheRead;
	total.cacheWrite += usage.cacheWrite;
	total.totalTokens += usage.totalTokens;
	total.cost.input += usage.cost.input;
	total.cost.output += usage.cost.output;
	total.cost.cacheRead += usage.cost.cacheRead;
	total.cost.cacheWrite += usage.cost.cacheWrite;
	total.cost.total += usage.cost.total;
}

/** Data of a `rlm_child_usage` entry: the child, the parent entry that spawned it, the usage of one of its runs. */
export interface ChildUsageData {
	rlm_child_id: string;
	name: string;
	spawnedBy: string | null;
	usage: Usage;
}

/** A session's tokens and cost: its own answers, its sub-agents' (rolled up), and both. */
export interface SessionUsage {
	own: Usage;
	children: Usage;
	total: Usage;
}

/** Sum the usage of a session's entries (every branch): assistant messages and `rlm_child_usage` entries. */
export function sessionUsage(entries: readonly SessionEntry[]): SessionUsage {
	const own = emptyUsage();
	const children = emptyUsage();
	for (const entry of entries) {
		if (entry.type === "message" && entry.message.role === "assistant") addUsage(own, entry.message.usage);
		if (entry.type === "custom" && entry.customType === CHILD_USAGE_ENTRY) {
			addUsage(children, (entry.data as ChildUsageData).usage);
		}
	}
	const total = emptyUsage();
	addUsage(total, own);
	addUsage(total, children);
	return { own, children, total };
}
