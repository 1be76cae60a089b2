import type { Usage } from "@mariozechner/pi-ai";

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
