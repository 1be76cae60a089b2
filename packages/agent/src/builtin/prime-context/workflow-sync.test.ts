import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../session/index.js";
import { workflowSyncOf } from "./workflow-sync.js";

const base = (id: string) => ({ id, parentId: null, timestamp: "2026-12-01T16:00:00.000Z" });
const message = (id: string, message: AgentMessage): SessionEntry => ({ ...base(id), type: "message", message });
const custom = (id: string, customType: string, data: unknown): SessionEntry => ({
	...base(id),
	type: "custom",
	customType,
	data,
});
const user = (id: string, text: string) => message(id, { role: "user", content: text, timestamp: 1 });
const toolResult = (id: string, text: string) =>
	message(id, {
		role: "toolResult",
		toolCallId: id,
		toolName: "ipython",
		content: [{ type: "text", text }],
		isError: false,
		timestamp: 1,
	} as AgentMessage);
const assistant = (id: string) =>
	message(id, { role: "assistant", content: [{ type: "text", text: "ok" }], timestamp: 1 } as unknown as AgentMessage);
const usage = (id: string, child: string, spawnedBy: string | null) =>
	custom(id, "rlm_child_usage", { rlm_child_id: child, name: child, spawnedBy, usage: {} });

describe("what the workflow learns from the branch", () => {
	it("user messages by entry id, the newest goal entry, the call's tokens", () => {
		const branch = [
			user("u1", "STAGE 1: parse"),
			custom("g1", "goal", { id: "goal_a", objective: "x", status: "active" }),
			user("u2", [
				{ type: "text", text: "REQUIREMENTS " },
				{ type: "text", text: "LOCKED" },
			] as unknown as string),
			custom("g2", "goal", { id: "goal_a", objective: "x", status: "paused" }),
			custom("bad", "goal", { status: 3 }),
		];
		expect(workflowSyncOf(branch, 1234)).toEqual({
			userMessages: [
				{ id: "u1", text: "STAGE 1: parse" },
				{ id: "u2", text: "REQUIREMENTS LOCKED" },
			],
			goal: { id: "goal_a", status: "paused" },
			contextTurn: { tokens: 1234 },
			childLaunches: [],
		});
		expect(workflowSyncOf([user("u1", "go")], 0).goal).toBeNull();
	});

	it("a sub-agent counts as launched after capsules only when its spawning entry follows the first capsule", () => {
		const branch = [
			user("u1", "go"),
			assistant("a1"),
			toolResult("t1", "short output"),
			assistant("a2"),
			toolResult("t2", '<prime_context_output id="obs_000001" tool="ipython" bytes="99999" lines="9">\n...'),
			assistant("a3"),
			usage("c1", "sub-early", "a1"),
			usage("c2", "sub-late", "a3"),
			usage("c3", "sub-late", "a3"),
			usage("c4", "sub-unknown", null),
		];
		expect(workflowSyncOf(branch, 0).childLaunches).toEqual([
			{ id: "sub-early", afterCapsule: false },
			{ id: "sub-late", afterCapsule: true },
			{ id: "sub-late", afterCapsule: true },
			{ id: "sub-unknown", afterCapsule: true },
		]);
		expect(workflowSyncOf(branch.slice(0, 4).concat(branch.slice(6, 7)), 0).childLaunches).toEqual([
			{ id: "sub-early", afterCapsule: false },
		]);
	});
});
