import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runCliText } from "prime-agent-test-support/cli-process";
import { killDaemon, roles, sessionRecords } from "prime-agent-test-support/daemon-world";
import { type LoopbackServer, localModelWorld, type ScriptedReply } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ExitCode } from "../src/errors.js";

// Real processes: the built command line (in its own process, or through the daemon's supervisor
// and worker), a kernel, and an OpenAI-compatible loopback model.
vi.setConfig({ testTimeout: 120_000 });

type Way = "built CLI in process" | "built CLI through the daemon";
const WAYS: Way[] = ["built CLI in process", "built CLI through the daemon"];

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
afterEach(async () => {
	if (world) killDaemon(world.home);
	await server?.close();
	world?.cleanup();
	world = undefined;
	server = undefined;
});

async function start(way: Way, script: ScriptedReply[]): Promise<TempWorld> {
	({ world, server } = await localModelWorld(script));
	if (way === "built CLI through the daemon") delete world.env.PRIME_AGENT_IN_PROCESS;
	return world;
}

const cli = (w: TempWorld, ...args: string[]) => runCliText([...args, "--model", "local/coder"], w.project, w.env);

/** The session files of the world's agent home. */
function sessionFiles(w: TempWorld): string[] {
	const dir = join(w.home, "sessions");
	return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".jsonl")) : [];
}

/** The statuses of the `goal` entries of a session file, oldest first. */
function goalStatuses(path: string): string[] {
	return sessionRecords(path)
		.filter((record) => record.type === "custom" && record.customType === "goal")
		.map((record) => String((record.data as { status: string }).status));
}

describe.each(WAYS)("a goal set by a one-shot slash command is kept (%s)", (way) => {
	it('-p "/goal ..." saves the goal and says how to continue; -c -p resumes that session and works on the goal', async () => {
		const w = await start(way, [{ code: 'print(await goal.complete("the tests pass: 3 passed"))' }, { text: "Done." }]);
		const set = await cli(w, "-p", "/goal --turns 5 fix the failing tests");
		expect(set.code).toBe(ExitCode.ok);
		const goalId = /^Goal (goal-[0-9a-f]{8}) set/.exec(set.stdout)?.[1] as string;
		expect(set.stderr).toBe(`Goal ${goalId} set: fix the failing tests\n`);
		const files = sessionFiles(w);
		expect(files).toHaveLength(1);
		const id = (files[0] as string).replace(/\.jsonl$/, "");
		const path = join(w.home, "sessions", files[0] as string);
		expect(set.stdout).toBe(
			`Goal ${goalId} set (budget: 5 turns). Work on it starts when this session continues: prime-agent --resume ${id} -p "<prompt>" (or -c, the newest session here).\n`,
		);
		// No model was called; the file holds the goal alone.
		expect(server?.requests).toHaveLength(0);
		expect(roles(sessionRecords(path))).toEqual(["session", "custom"]);
		expect(goalStatuses(path)).toEqual(["active"]);

		const shown = await cli(w, "-c", "-p", "/goal");
		expect(shown.code).toBe(ExitCode.ok);
		expect(shown.stdout).toBe(
			`Goal ${goalId} (active): fix the failing tests\n  used: 0 turns, 0 tokens, 0s; budget: 5 turns\n`,
		);

		const go = await cli(w, "-c", "-p", "go");
		expect(go.code).toBe(ExitCode.ok);
		expect(sessionFiles(w)).toEqual(files);
		expect(server?.requests).toHaveLength(2);
		// The goal's start message goes with the first prompt of the continued session, once.
		const first = JSON.stringify(server?.requests[0]);
		expect(first.split(`[goal ${goalId}] A goal is set for this session.`)).toHaveLength(2);
		expect(first).toContain("fix the failing tests");
		expect(JSON.stringify(server?.requests[1]).split(`[goal ${goalId}] A goal is set`)).toHaveLength(2);
		expect(goalStatuses(path)).toEqual(["active", "complete"]);
		expect(go.stderr).toContain(`Goal ${goalId} is active: fix the failing tests`);
	});

	it('-p "/goal pause" and "/goal resume" alone are kept too; the resumed goal starts with the next prompt', async () => {
		const w = await start(way, [{ text: "Working." }]);
		expect((await cli(w, "-p", "/goal ship it")).code).toBe(ExitCode.ok);
		const [file] = sessionFiles(w);
		const id = (file as string).replace(/\.jsonl$/, "");
		const path = join(w.home, "sessions", file as string);
		const paused = await cli(w, "-c", "-p", "/goal pause");
		expect(paused.code).toBe(ExitCode.ok);
		const goalId = /^Goal (goal-[0-9a-f]{8}) paused; the host no longer continues it\./.exec(paused.stdout)?.[1];
		expect(goalId).toMatch(/^goal-/);
		const resumed = await cli(w, "-c", "-p", "/goal resume --turns 1");
		expect(resumed.code).toBe(ExitCode.ok);
		expect(resumed.stdout).toBe(
			`Goal ${goalId} resumed (budget: 1 turns). Work on it starts when this session continues: prime-agent --resume ${id} -p "<prompt>" (or -c, the newest session here).\n`,
		);
		expect(goalStatuses(path)).toEqual(["active", "paused", "active"]);

		const go = await cli(w, "-c", "-p", "go");
		expect(go.code).toBe(ExitCode.limitReached);
		expect(server?.requests).toHaveLength(1);
		expect(JSON.stringify(server?.requests[0]).split(`[goal ${goalId}] A goal is set`)).toHaveLength(2);
		expect(sessionFiles(w)).toEqual([file]);
		expect(goalStatuses(path)).toEqual(["active", "paused", "active", "budget_reached"]);
	});

	it("a slash command that changes nothing leaves no file: /goal, a refused /goal pause, /goal clear", async () => {
		const w = await start(way, []);
		expect((await cli(w, "-p", "/goal")).stdout).toBe(
			"No goal. Set one with /goal <objective> (options: --tokens N, --turns N, --minutes N).\n",
		);
		for (const command of ["/goal pause", "/goal clear"]) {
			const refused = await cli(w, "-p", command);
			expect(refused.code, command).not.toBe(ExitCode.ok);
		}
		expect(sessionFiles(w)).toEqual([]);
		expect(server?.requests).toHaveLength(0);
	});
});

describe.each(WAYS)("a Prime Context task change made by a one-shot slash command is kept (%s)", (way) => {
	it('-p "/pc focus ..." keeps the session; -c finds the focus again, and the model gets it with the next prompt', async () => {
		const w = await start(way, [{ text: "Looking at the parser." }]);
		const task = '<prime_context_task>\nFOCUS\n"fix the parser"\n</prime_context_task>\n';
		const focus = await cli(w, "-p", "/pc focus fix the parser");
		expect(focus.code).toBe(ExitCode.ok);
		expect(focus.stdout).toBe(`Task updated: set focus.\n${task}`);
		const files = sessionFiles(w);
		expect(files).toHaveLength(1);
		const id = (files[0] as string).replace(/\.jsonl$/, "");

		const status = await cli(w, "-c", "-p", "/pc status");
		expect(status.code).toBe(ExitCode.ok);
		expect(status.stdout.split("\n")[1]).toMatch(new RegExp(`^session: ${id} \\(`));
		expect(status.stdout.endsWith(task)).toBe(true);

		const go = await cli(w, "-c", "-p", "go");
		expect(go.code).toBe(ExitCode.ok);
		expect(sessionFiles(w)).toEqual(files);
		expect(server?.requests).toHaveLength(1);
		expect(JSON.stringify(server?.requests[0])).toContain(JSON.stringify(task.trimEnd()).slice(1, -1));
	});
});
