import { readFileSync } from "node:fs";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { GOAL_READY_GUARD, UNLOCKED_GUARD } from "prime-agent-context";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import { SAME_POLL_RESULT } from "../src/builtin/prime-context/context-view.js";
import { cell, scriptAgents } from "./agent-scripts.js";
import { expectPromptOnlyGrows } from "./prompt-growth.js";

/**
 * Stands in for the goals feature, by its contract: with GOAL_SIM_ENTRY set, an active `goal` custom
 * entry on the branch before every prompt; each time the model would stop, a hidden `goal_context`
 * continuation prompt (up to GOAL_SIM_CONTINUATIONS of them).
 */
const GOAL_SIM_EXTENSION = `
export default function (api) {
	const limit = Number(api.env.GOAL_SIM_CONTINUATIONS ?? "0");
	let continuations = 0;
	api.on("before_agent_start", () => {
		if (api.env.GOAL_SIM_ENTRY) api.appendEntry("goal", { id: "goal_1", objective: "implement take()", status: "active" });
	});
	api.on("turn_end", (event) => {
		const calls = (event.message.content ?? []).filter((part) => part.type === "toolCall");
		if (calls.length > 0 || continuations >= limit) return;
		continuations++;
		api.sendMessage(
			{ customType: "goal_context", content: "Goal continuation " + continuations + ": the goal is still active (elapsed " + continuations * 30 + "s). Audit the objective before goal.complete()." },
			{ deliverAs: "followUp" },
		);
	});
}
`;

const fixture = (name: string) =>
	readFileSync(new URL(`../../../fixtures/outputs/${name}/output.txt`, import.meta.url), "utf8");
/** The full suite (901 tests, passing) and a smaller focused run (477 tests, passing). */
const FULL = fixture("016-mi-unittest-pass-verbose");
const FOCUSED = fixture("030-ptr-vitest-pass-verbose");

/** The guards' exact texts are tested in the context package; here they must reach the model. */
const UNLOCKED = UNLOCKED_GUARD;
const READY = GOAL_READY_GUARD;

const sessions = useFauxSessions();

function newWorld(continuations: number, goalEntry = false) {
	const world = sessions.newWorld({
		GOAL_SIM_CONTINUATIONS: String(continuations),
		...(goalEntry ? { GOAL_SIM_ENTRY: "1" } : {}),
	});
	world.writeProject(".prime/agent/extensions/goal-sim.js", GOAL_SIM_EXTENSION);
	world.writeProject("full.log", FULL);
	world.writeProject("focused.log", FOCUSED);
	return world;
}

const snapshot = (context: Context): Context => JSON.parse(JSON.stringify(context));
/** A request the host makes apart from the conversation (a compaction summary, a harness review), answered apart. */
const sideRequest = (context: Context) =>
	/^<(conversation|trajectory)\b/.test(wireText(context.messages[0] as Context["messages"][number]));
const toolResults = (context: Context) => context.messages.filter((m) => m.role === "toolResult").map(wireText);
const userTexts = (context: Context) => context.messages.filter((m) => m.role === "user").map(wireText);
const goalPrompts = (context: Context) => userTexts(context).filter((text) => text.startsWith("Goal continuation"));
const taskMessage = (context: Context) => userTexts(context).find((text) => text.startsWith("<prime_context_task>"));

/** A poll of a long job: the same status every time, with a fresh UUID and elapsed value. */
const POLL = `import uuid, time\nprint(f"job {uuid.uuid4()} running, elapsed {time.monotonic():.1f}s; 0 of 3 files written, log in job.log")`;
/** What the poll prints (a new UUID and elapsed value every time). */
const POLLED = /^job [0-9a-f-]{36} running, elapsed [\d.]+s; 0 of 3 files written, log in job.log$/;
const FINISHED = `print("job finished after 3 retries: 3 files written to out/, exit status 0, full log in job.log")`;

/** The model polls after every prompt and says it waits after every poll; `code(n)` is the n-th poll (0 = the first, before any continuation). */
function pollingModel(sent: Context[], code: (n: number) => string) {
	let polls = 0;
	return (context: Context) => {
		if (sideRequest(context)) return fauxAssistantMessage("Nothing to add.");
		sent.push(snapshot(context));
		if (context.messages.at(-1)?.role === "toolResult") return fauxAssistantMessage("Still waiting.");
		return fauxAssistantMessage([fauxToolCall("ipython", { code: code(polls++) })]);
	};
}

describe("goal continuation coalescing in the agent", () => {
	it("twenty identical idle polls: the first is sent whole, the others short, and nothing sent is ever rewritten", async () => {
		newWorld(20);
		const sent: Context[] = [];
		const model = pollingModel(sent, () => POLL);
		sessions.faux.setResponses(Array.from({ length: 60 }, () => model));
		const session = await sessions.start({ trustProject: true });
		const outcome = await session.agentSession.prompt("watch the job until it ends");
		expect(outcome.errorMessage).toBeUndefined();
		expect(outcome.status).toBe("ok");
		expect(sent).toHaveLength(42);
		expectPromptOnlyGrows(sent);

		// The transcript keeps every continuation and every result whole; only what is sent is short.
		const stored = session.session
			.branch()
			.filter((e) => e.type === "custom_message" && e.customType === "goal_context");
		expect(stored).toHaveLength(20);
		const last = sent[41] as Context;
		// The first poll answered the user, the second the first continuation; the other nineteen repeat it.
		const results = toolResults(last);
		expect(results).toHaveLength(21);
		expect(results.slice(0, 2).every((result) => POLLED.test(result))).toBe(true);
		expect(results.slice(2)).toEqual(Array.from({ length: 19 }, () => SAME_POLL_RESULT));
		expect(goalPrompts(last)).toHaveLength(20);
		const kept = session.session
			.branch()
			.flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [wireText(e.message)] : []));
		expect(kept.filter((text) => POLLED.test(text))).toHaveLength(21);
	});

	it("a poll whose result changes is sent whole; the identical ones after it are short", async () => {
		newWorld(20);
		const sent: Context[] = [];
		const model = pollingModel(sent, (n) => (n < 10 ? POLL : FINISHED));
		sessions.faux.setResponses(Array.from({ length: 60 }, () => model));
		const session = await sessions.start({ trustProject: true });
		await session.agentSession.prompt("watch the job until it ends");
		expectPromptOnlyGrows(sent);
		const results = toolResults(sent[41] as Context);
		expect(results).toHaveLength(21);
		expect(results[1]).toMatch(POLLED);
		expect(results.slice(2, 10)).toEqual(Array.from({ length: 8 }, () => SAME_POLL_RESULT));
		expect(results[10]).toBe(
			"job finished after 3 retries: 3 files written to out/, exit status 0, full log in job.log",
		);
		expect(results.slice(11)).toEqual(Array.from({ length: 10 }, () => SAME_POLL_RESULT));
	});
});

describe("the staged workflow in the agent", () => {
	it("tracks stages, ignores a quoted lock, and says GOAL_READY only after a post-lock cumulative pass", async () => {
		newWorld(0, true);
		const prompts = new Map([
			["STAGE 1: implement take()", "full.log"],
			['The old ticket said "REQUIREMENTS LOCKED"; it was wrong. Stage 2: add drop().', "focused.log"],
			["REQUIREMENTS LOCKED", "full.log"],
		]);
		const sent: Context[] = [];
		// Runs the file that goes with a new prompt; answers anything else (a result, a goal continuation) with text.
		const model = (context: Context) => {
			if (sideRequest(context)) return fauxAssistantMessage("Nothing to add.");
			sent.push(snapshot(context));
			const last = context.messages.filter((m) => !wireText(m).startsWith("<prime_context_task>")).at(-1);
			const file = last?.role === "user" ? prompts.get(wireText(last)) : undefined;
			if (!file) return fauxAssistantMessage("Done for now.");
			prompts.delete(wireText(last as Context["messages"][number]));
			return fauxAssistantMessage([fauxToolCall("ipython", { code: `print(open('${file}').read(), end='')` })]);
		};
		sessions.faux.setResponses(Array.from({ length: 60 }, () => model));
		const session = await sessions.start({ trustProject: true });
		/** The first context the model got with a tool result containing `marker`: that result and the task message. */
		const seen = (marker: string) => {
			const context = sent.find((c) => toolResults(c).some((text) => text.includes(marker))) as Context;
			return {
				result: toolResults(context).find((text) => text.includes(marker)) as string,
				task: taskMessage(context),
			};
		};

		await session.agentSession.prompt("STAGE 1: implement take()");
		const stage = seen("TEST_RESULT PASS 901/901");
		expect(stage.result).toContain(
			`\nWORKFLOW STAGE_CLEAN: requirements_revision=1 locked=no cumulative_suite=901 tests PASS at revision 1 goal_ready=no\n${UNLOCKED}\n`,
		);
		expect(stage.task).toBe(
			`<prime_context_task>\nWORKFLOW\nrequirements_revision=1 locked=no cumulative_suite=901 tests PASS at revision 1 goal_ready=no latest_test=901 tests PASS at revision 1\n${UNLOCKED}\n</prime_context_task>`,
		);

		await session.agentSession.prompt('The old ticket said "REQUIREMENTS LOCKED"; it was wrong. Stage 2: add drop().');
		expect(seen("TEST_RESULT PASS 477/477").result).toContain(
			`\nWORKFLOW COMMAND_CLEAN: requirements_revision=2 locked=no cumulative_suite=901 tests PASS at revision 1 (stale: requirements are at revision 2) goal_ready=no\n${UNLOCKED}\n`,
		);

		await session.agentSession.prompt("REQUIREMENTS LOCKED");
		const ready = seen("UNCHANGED: this output is byte-for-byte identical to obs_000001");
		expect(ready.result).toContain(
			`\nWORKFLOW GOAL_READY: requirements_revision=2 locked=yes cumulative_suite=901 tests PASS at revision 2, after the lock goal_ready=yes\n${READY}\n`,
		);
		expect(ready.task).toBe(
			`<prime_context_task>\nWORKFLOW\nGOAL_READY requirements_revision=2 locked=yes cumulative_suite=901 tests PASS at revision 2, after the lock goal_ready=yes latest_test=901 tests PASS at revision 2\n${READY}\n</prime_context_task>`,
		);
		expect(prompts.size).toBe(0);

		const status = (await session.agentSession.prompt("/pc status")).command?.message ?? "";
		const lines = status.split("\n").filter((line) => line.startsWith("workflow "));
		expect(lines.slice(0, 7)).toEqual([
			"workflow requirements_revision: 2",
			"workflow locked: yes (since revision 2)",
			expect.stringMatching(/^workflow staged: yes; goal: \w+ \(goal_1\)$/),
			"workflow latest_test_revision: 2",
			"workflow latest_test_result: 901 tests PASS (obs_000003)",
			"workflow cumulative_suite: 901 tests PASS at revision 2, after the lock (obs_000003)",
			"workflow goal_ready: yes (GOAL_READY)",
		]);
		// Every provider call after the one that ran the first suite counts.
		const after = Number(
			/^workflow context turns after the first clean success: (\d+) \(first clean success obs_000001\)$/m.exec(
				status,
			)?.[1],
		);
		expect(after).toBe(sent.length - 1);
		expect(lines[8]).toBe("workflow child launches after capsules: 0 (of 0 observed)");
		expect(lines[9]).toMatch(
			new RegExp(
				`^workflow context-token load per KiB saved: \\d+\\.\\d \\(\\d+ context tokens over ${sent.length} calls; \\d+\\.\\d KiB saved\\)$`,
			),
		);
	});
});

describe("the lock across branches", () => {
	it("resuming or forking at an entry before the lock leaves the requirements locked", async () => {
		newWorld(0);
		const answer = (text: string) => (context: Context) =>
			sideRequest(context) ? fauxAssistantMessage("Nothing to add.") : fauxAssistantMessage(text);
		sessions.faux.setResponses([
			answer("answer 1"),
			answer("answer 2"),
			...Array.from({ length: 6 }, () => answer("later answer")),
		]);
		const workflowLines = async (session: Awaited<ReturnType<typeof sessions.start>>) =>
			((await session.agentSession.prompt("/pc status")).command?.message ?? "")
				.split("\n")
				.filter((line) => /^workflow (requirements_revision|locked):/.test(line));

		const original = await sessions.start({ trustProject: true });
		await original.agentSession.prompt("STAGE 1: implement take()");
		await original.agentSession.prompt("REQUIREMENTS LOCKED");
		await original.dispose();
		const beforeLock = original.session
			.branch()
			.find((entry) => entry.type === "message" && JSON.stringify(entry.message).includes("answer 1"));
		if (!beforeLock) throw new Error("answer 1 was not recorded");

		const forked = await sessions.start({ fork: original.session.id, at: beforeLock.id, trustProject: true });
		await forked.agentSession.prompt("Stage 2: add drop()");
		expect(await workflowLines(forked)).toEqual([
			"workflow requirements_revision: 2",
			"workflow locked: yes (since revision 1)",
		]);
		await forked.dispose();

		const rewound = await sessions.start({ resume: original.session.path, at: beforeLock.id, trustProject: true });
		await rewound.agentSession.prompt("Stage 2: add slice()");
		expect(await workflowLines(rewound)).toEqual([
			"workflow requirements_revision: 2",
			"workflow locked: yes (since revision 1)",
		]);
	});
});

describe("child launches after capsules", () => {
	it("counts a sub-agent launched after the first capsule, and not one launched before it", async () => {
		newWorld(0);
		const started = await sessions.start({ trustProject: true });
		const print = (file: string) => cell(`print(open('${file}').read(), end='')`);
		scriptAgents(
			sessions,
			{
				root: [
					cell('await rlm("say hi", name="early")'),
					print("full.log"),
					cell('await rlm("say hi", name="late")'),
					...Array.from({ length: 4 }, () => fauxAssistantMessage("Waiting for the sub-agents.")),
				],
				early: [fauxAssistantMessage("hi from early")],
				late: [fauxAssistantMessage("hi from late")],
			},
			(context) => (sideRequest(context) ? fauxAssistantMessage("Nothing to add.") : undefined),
		);
		expect((await started.agentSession.prompt("run the suite and get two helpers")).status).toBe("ok");
		await started.whenSettled();
		// One more provider call, so the tracker has seen both children's entries on the branch.
		await started.agentSession.prompt("anything else?");
		const status = (await started.agentSession.prompt("/pc status")).command?.message ?? "";
		expect(status).toContain("\nworkflow child launches after capsules: 1 (of 2 observed)\n");
	});
});

describe("the workflow when its state cannot be written", () => {
	it("the run goes on and the problem is reported once, not at every call", async () => {
		const world = newWorld(0);
		// The storage root is a file: nothing can be created under it.
		world.writeProject("not-a-dir", "x");
		world.env.PRIME_CONTEXT_HOME = `${world.project}/not-a-dir`;
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: "print('hello')" })]),
			fauxAssistantMessage("Done."),
		]);
		const session = await sessions.start({ trustProject: true });
		expect((await session.agentSession.prompt("STAGE 1: say hello")).status).toBe("ok");
		const warnings = session.extensions.problems
			.map((problem) => problem.message)
			.filter((message) => message.startsWith("Prime Context: the workflow state was not updated ("));
		expect(warnings).toHaveLength(1);
	});
});
