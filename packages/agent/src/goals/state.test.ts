import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Session } from "../session/index.js";
import { unstartedGoal } from "./state.js";
import { GOAL_CONTEXT, GOAL_ENTRY, type GoalData } from "./types.js";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function session(): Session {
	const dir = mkdtempSync(join(tmpdir(), "prime-agent-goal-state-"));
	dirs.push(dir);
	return Session.create({ dir, cwd: dir });
}

const used = { tokens: 0, turns: 0, timeMs: 0 };
const goal = (id: string, status: GoalData["status"], turns = 0): GoalData => ({
	id,
	objective: `objective of ${id}`,
	status,
	used: { ...used, turns },
});
const startMessage = (s: Session) =>
	s.append({ type: "custom_message", customType: GOAL_CONTEXT, content: "[goal] A goal is set", display: false });

it("unstartedGoal(): an active goal no goal message followed since it was set or resumed; saved usage does not start it anew", () => {
	const s = session();
	expect(unstartedGoal(s.branch())).toBe(undefined);
	s.appendCustom(GOAL_ENTRY, goal("goal-a", "active"));
	expect(unstartedGoal(s.branch())?.id).toBe("goal-a");
	startMessage(s);
	expect(unstartedGoal(s.branch())).toBe(undefined);
	// The usage a run saved is a new entry of the same active goal: work on it had started.
	s.appendCustom(GOAL_ENTRY, goal("goal-a", "active", 2));
	expect(unstartedGoal(s.branch())).toBe(undefined);
	s.appendCustom(GOAL_ENTRY, goal("goal-a", "paused", 2));
	expect(unstartedGoal(s.branch())).toBe(undefined);
	s.appendCustom(GOAL_ENTRY, goal("goal-a", "active", 2));
	expect(unstartedGoal(s.branch())).toMatchObject({ id: "goal-a", used: { turns: 2 } });
	startMessage(s);
	expect(unstartedGoal(s.branch())).toBe(undefined);
	// A new goal replacing a started one has not started.
	s.appendCustom(GOAL_ENTRY, goal("goal-b", "active"));
	expect(unstartedGoal(s.branch())?.id).toBe("goal-b");
	s.appendCustom(GOAL_ENTRY, goal("goal-b", "cleared"));
	expect(unstartedGoal(s.branch())).toBe(undefined);
});
