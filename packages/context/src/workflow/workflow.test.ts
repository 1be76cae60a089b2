import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ContextSession, openContextSession } from "../session.js";
import {
	COMPLETION_GUARD,
	declaresLock,
	declaresStage,
	GOAL_READY_GUARD,
	isBareLock,
	UNLOCKED_GUARD,
} from "./index.js";

/** Real runs from the fixture outputs: the full suite (901 tests), a focused vitest run (477), a failing pytest run. */
const fixture = (name: string) =>
	readFileSync(new URL(`../../../../fixtures/outputs/${name}/output.txt`, import.meta.url), "utf8");
const FULL = fixture("016-mi-unittest-pass-verbose");
const FOCUSED = fixture("030-ptr-vitest-pass-verbose");
const FAILING = fixture("008-itsdangerous-pytest-maxage-flip");

const UNLOCKED =
	"Requirements are not locked: keep the active goal open and do not call goal.complete(); more requirements may follow.";
const COMPLETION =
	"Requirements are locked. Keep the goal open until the cumulative suite of the current requirements revision passes after the lock with no later failure; then complete it.";
const READY =
	"Call await goal.complete() now. Do not inspect the goal API, read source, reconstruct requirements, run probes, or rerun an unchanged suite unless new evidence appears.";
const GOAL = { id: "goal_1", status: "active" };

let root: string;
let session: ContextSession;
let messageIds = 0;

beforeEach(async () => {
	root = await mkdtemp(join(tmpdir(), "pc-workflow-"));
	session = await openContextSession({ root, sessionId: "s", cwd: root, env: {} });
	messageIds = 0;
});
afterEach(async () => {
	await rm(root, { recursive: true, force: true });
});

/** A user message, as a host reports the branch (each with a fresh entry id). */
const say = (text: string, goal: { id: string; status: string } | null = GOAL) =>
	session.workflow.sync({ userMessages: [{ id: `u${++messageIds}`, text }], goal });
const run = (text: string, isError = false) => session.observe({ tool: "ipython", text, isError });
const statusLines = async () =>
	(await session.recover({ action: "status" })).text.split("\n").filter((line) => line.startsWith("workflow "));

describe("requirement lock declarations", () => {
	it("lock only from a declaration at the very start of the whole message", () => {
		for (const text of [
			"REQUIREMENTS LOCKED",
			"REQUIREMENTS LOCKED: stage 3 adds the --json flag",
			"  requirements are locked.\nNothing else changes.",
			"## Requirements locked\nStage 3: the last one",
			"**REQUIREMENTS LOCKED** — final stage",
		])
			expect([text, declaresLock(text)]).toEqual([text, true]);
		for (const text of [
			'"REQUIREMENTS LOCKED"',
			"> REQUIREMENTS LOCKED",
			"`REQUIREMENTS LOCKED`",
			"“REQUIREMENTS LOCKED”",
			"Stage 2: add caching.\nREQUIREMENTS LOCKED",
			"Do not treat this as REQUIREMENTS LOCKED.",
			"REQUIREMENTS LOCKED?",
			"Requirements locked yet? Stage 3 may follow",
			"REQUIREMENTS LOCKED final stage follows",
			"REQUIREMENTS UNLOCKED",
		])
			expect([text, declaresLock(text)]).toEqual([text, false]);
	});

	it("a bare declaration adds no requirements; one with text does", () => {
		expect(isBareLock("REQUIREMENTS LOCKED.")).toBe(true);
		expect(isBareLock("**Requirements are locked**\n")).toBe(true);
		expect(isBareLock("REQUIREMENTS LOCKED: also support --json")).toBe(false);
	});

	it("stages are declared at the start too", () => {
		expect(declaresStage("STAGE 1: parse the config")).toBe(true);
		expect(declaresStage("## Requirements stage 2\n- add caching")).toBe(true);
		expect(declaresStage("Next, stage 2 of the plan")).toBe(false);
		expect(declaresStage("> STAGE 2")).toBe(false);
		expect(declaresStage("Stage 2?")).toBe(false);
	});

	it("quoted or later lock text in real messages leaves the requirements unlocked and advances the revision", async () => {
		await say("STAGE 1: implement take()");
		await say('The old ticket said "REQUIREMENTS LOCKED" but it was wrong; add drop() too.');
		const state = await say("Stage 2: add drop().\nREQUIREMENTS LOCKED");
		expect(state.locked).toBe(false);
		expect(state.requirementsRevision).toBe(3);
		expect(state.staged).toBe(true);
	});

	it("the lock is monotonic: a later branch sync without the lock message neither unlocks nor lowers the revision", async () => {
		const one = { id: "a", text: "STAGE 1: implement take()" };
		const lock = { id: "b", text: "REQUIREMENTS LOCKED" };
		let state = await session.workflow.sync({ userMessages: [one, lock], goal: GOAL });
		expect([state.locked, state.requirementsRevision, state.lockedAtRevision]).toEqual([true, 1, 1]);
		// The branch moved back before the lock (`--at`) and went on with another message.
		state = await session.workflow.sync({ userMessages: [one, { id: "c", text: "Stage 2: add drop()" }] });
		expect([state.locked, state.requirementsRevision]).toEqual([true, 2]);
		// Seeing the old branch again counts nothing twice.
		state = await session.workflow.sync({ userMessages: [one, lock] });
		expect([state.locked, state.requirementsRevision, state.lockedAtRevision]).toEqual([true, 2, 1]);
		// And it survives a new session object on the same files.
		const again = await openContextSession({ root, sessionId: "s", cwd: root, env: {} });
		expect((await again.workflow.load()).locked).toBe(true);
	});
});

describe("test results and the cumulative suite", () => {
	it("a smaller focused run does not replace the cumulative suite", async () => {
		await say("STAGE 1: implement take()");
		const full = await run(FULL);
		const focused = await run(FOCUSED);
		const state = await session.workflow.load();
		expect(state.cumulativeSuite).toEqual(expect.objectContaining({ id: full.id, tests: 901, result: "pass" }));
		expect(state.latestTest).toEqual(expect.objectContaining({ id: focused.id, tests: 477, result: "pass" }));
		// The focused run's clean capsule says only the stage is clean (the full suite passed at this revision).
		expect(focused.decision).toBe("structured-capsule");
		expect(focused.text).toContain(
			`\nWORKFLOW STAGE_CLEAN: requirements_revision=1 locked=no cumulative_suite=901 tests PASS at revision 1 goal_ready=no\n${UNLOCKED}\n`,
		);
	});

	it("a result goes stale when requirements advance: a clean run then is only COMMAND_CLEAN", async () => {
		await say("STAGE 1: implement take()");
		await run(FULL);
		await say("Stage 2: add drop()");
		const focused = await run(FOCUSED);
		expect(focused.text).toContain(
			`\nWORKFLOW COMMAND_CLEAN: requirements_revision=2 locked=no cumulative_suite=901 tests PASS at revision 1 (stale: requirements are at revision 2) goal_ready=no\n${UNLOCKED}\n`,
		);
		expect(await statusLines()).toContain(
			`workflow cumulative_suite: 901 tests PASS at revision 1 (stale: requirements are at revision 2) (obs_000001)`,
		);
	});

	it("GOAL_READY only after a cumulative pass after the lock, with no later decisive failure", async () => {
		await say("STAGE 1: implement take()");
		await run(FULL);
		let state = await say("REQUIREMENTS LOCKED");
		expect(state.requirementsRevision).toBe(1);
		// A pass before the lock does not count, and a focused run is not the suite.
		const focused = await run(FOCUSED);
		expect(focused.text).toContain(
			`\nWORKFLOW STAGE_CLEAN: requirements_revision=1 locked=yes cumulative_suite=901 tests PASS at revision 1 goal_ready=no\n${COMPLETION}\n`,
		);
		expect(await statusLines()).toContain("workflow goal_ready: no (the cumulative suite passed before the lock)");

		// The full suite again, after the lock: an unchanged delta that says the goal is ready.
		const rerun = await run(FULL);
		expect(rerun.decision).toBe("delta-capsule");
		expect(rerun.text).toContain(
			`\nWORKFLOW GOAL_READY: requirements_revision=1 locked=yes cumulative_suite=901 tests PASS at revision 1, after the lock goal_ready=yes\n${READY}\n`,
		);

		// A later decisive failure (a focused failing run) takes readiness away until the suite passes again.
		const failed = await run(FAILING, true);
		state = await session.workflow.load();
		expect(state.cumulativeSuite?.id).toBe(rerun.id);
		expect(await statusLines()).toContain(`workflow goal_ready: no (a later failure (${failed.id}))`);
		const again = await run(FULL);
		expect(again.text).toContain(`\n${READY}\n`);
		expect(await statusLines()).toContain("workflow goal_ready: yes (GOAL_READY)");
	});

	it("a later requirement message after the lock makes the post-lock pass stale", async () => {
		await say("STAGE 1: implement take()");
		await say("REQUIREMENTS LOCKED");
		await run(FULL);
		expect((await statusLines()).includes("workflow goal_ready: yes (GOAL_READY)")).toBe(true);
		await say("Also make take() accept negative counts.");
		expect(await statusLines()).toContain(
			"workflow goal_ready: no (the cumulative suite is stale (revision 1; requirements are at revision 2))",
		);
	});

	it("a clean capsule with a smaller budget keeps the state and the guard within it", async () => {
		session = await openContextSession({
			root,
			sessionId: "small",
			cwd: root,
			env: {},
			config: { capsuleMaxBytes: 512 },
		});
		await say("STAGE 1: implement take()");
		await say("REQUIREMENTS LOCKED");
		const capsule = await run(FULL);
		expect(capsule.decision).toBe("structured-capsule");
		expect(capsule.text).toContain(`\nTEST_RESULT PASS 901/901\nWORKFLOW GOAL_READY\n${READY}\n`);
		expect(Buffer.byteLength(capsule.text)).toBeLessThanOrEqual(512);
	});

	it("without an active goal, or outside staged work, clean capsules carry no workflow lines", async () => {
		await say("STAGE 1: implement take()", null);
		const noGoal = await run(FULL);
		expect(noGoal.text).not.toContain("WORKFLOW");
		await rm(join(root, "sessions"), { recursive: true });
		session = await openContextSession({ root, sessionId: "s", cwd: root, env: {} });
		await say("implement take()");
		const unstaged = await run(FULL);
		expect(unstaged.decision).toBe("structured-capsule");
		expect(unstaged.text).not.toContain("WORKFLOW");
		expect(unstaged.text).not.toContain("goal.complete");
	});
});

describe("workflow status", () => {
	it("reports every field and the follow-up-cost figures exactly", async () => {
		await session.workflow.sync({ contextTurn: { tokens: 1_000 } });
		await say("STAGE 1: implement take()");
		await say("REQUIREMENTS LOCKED");
		await run(FULL);
		await session.workflow.sync({ contextTurn: { tokens: 3_000 } });
		await session.workflow.sync({
			contextTurn: { tokens: 4_000 },
			childLaunches: [
				{ id: "sub-1", afterCapsule: false },
				{ id: "sub-2", afterCapsule: true },
			],
		});
		await session.workflow.sync({ childLaunches: [{ id: "sub-2", afterCapsule: true }] });
		const saved = (await session.broker.metrics()).visibleBytesSaved;
		const kib = saved / 1024;
		expect(await statusLines()).toEqual([
			"workflow requirements_revision: 1",
			"workflow locked: yes (since revision 1)",
			"workflow staged: yes; goal: active (goal_1)",
			"workflow latest_test_revision: 1",
			"workflow latest_test_result: 901 tests PASS (obs_000001)",
			"workflow cumulative_suite: 901 tests PASS at revision 1, after the lock (obs_000001)",
			"workflow goal_ready: yes (GOAL_READY)",
			"workflow context turns after the first clean success: 2 (first clean success obs_000001)",
			"workflow child launches after capsules: 1 (of 2 observed)",
			`workflow context-token load per KiB saved: ${(8_000 / kib).toFixed(1)} (8000 context tokens over 3 calls; ${kib.toFixed(1)} KiB saved)`,
		]);
	});

	it("an empty session says so, without dividing by nothing", async () => {
		expect(await statusLines()).toEqual([
			"workflow requirements_revision: 0",
			"workflow locked: no",
			"workflow staged: no (no message opened with a stage or lock declaration); goal: none",
			"workflow latest_test_revision: none",
			"workflow latest_test_result: none",
			"workflow cumulative_suite: none",
			"workflow goal_ready: no (requirements are not locked)",
			"workflow context turns after the first clean success: 0 (no clean success yet)",
			"workflow child launches after capsules: 0 (of 0 observed)",
			"workflow context-token load per KiB saved: n/a (no provider calls reported; 0.0 KiB saved)",
		]);
		await session.workflow.sync({ contextTurn: { tokens: 2_500 } });
		expect((await statusLines()).at(-1)).toBe(
			"workflow context-token load per KiB saved: n/a (2500 context tokens over 1 call; nothing saved yet)",
		);
	});
});

describe("workflow texts", () => {
	it("the guards are these exact texts", () => {
		expect([UNLOCKED_GUARD, COMPLETION_GUARD, GOAL_READY_GUARD]).toEqual([UNLOCKED, COMPLETION, READY]);
	});
});

describe("workflow persistence", () => {
	it("a damaged workflow in the state file starts fresh field by field; observations still work", async () => {
		await say("STAGE 1: implement take()");
		await run(FULL);
		const file = join(root, "sessions", "s", "broker-state.json");
		const stored = JSON.parse(await readFile(file, "utf8"));
		stored.workflow = { ...stored.workflow, locked: "yes", seq: -4, cumulativeSuite: { tests: "many" }, goal: 7 };
		await writeFile(file, JSON.stringify(stored));
		const state = await session.workflow.load();
		expect([state.locked, state.seq, state.cumulativeSuite, state.goal, state.requirementsRevision]).toEqual([
			false,
			0,
			null,
			null,
			1,
		]);
		const next = await run(FULL);
		expect(next.stateError).toBeUndefined();
		expect((await session.workflow.load()).cumulativeSuite?.id).toBe(next.id);
	});

	it("a sync that cannot write says so; reading an unwritable session gives the empty workflow", async () => {
		await writeFile(join(root, "blocked"), "a file, not a folder");
		const blocked = await openContextSession({ root: join(root, "blocked"), sessionId: "s", cwd: root, env: {} });
		await expect(blocked.workflow.sync({ contextTurn: { tokens: 1 } })).rejects.toThrow(/ENOTDIR|EEXIST/);
		expect((await blocked.workflow.load()).contextTurns).toBe(0);
	});

	it("concurrent syncs and observations from two processes' sessions lose nothing", async () => {
		const other = await openContextSession({ root, sessionId: "s", cwd: root, env: {} });
		await Promise.all([
			...Array.from({ length: 8 }, (_, i) =>
				(i % 2 ? other : session).workflow.sync({
					userMessages: [{ id: `m${i}`, text: `Stage ${i + 1}: part ${i}` }],
					contextTurn: { tokens: 10 },
				}),
			),
			run(FULL),
			other.observe({ tool: "ipython", text: FOCUSED, isError: false }),
		]);
		const state = await session.workflow.load();
		expect([state.requirementsRevision, state.contextTurns, state.contextTokens, state.seq]).toEqual([8, 8, 80, 10]);
		expect(state.cumulativeSuite?.tests).toBe(901);
	});
});
