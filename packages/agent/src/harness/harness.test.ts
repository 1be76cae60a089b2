import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	type Context,
	type FauxProviderRegistration,
	fauxAssistantMessage,
	type Message,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { harnessCommand } from "../builtin/harness/commands.js";
import { AutoRefineSchedule } from "./auto-refine.js";
import { Harness } from "./harness.js";
import { withFileLock } from "./locked-file.js";
import { parsePlan } from "./plan.js";
import { renderHarnessSection } from "./prompt-index.js";
import { rollbackRefinement, runRefinement } from "./refine.js";
import { PLANNING_SYSTEM_PROMPT, REVIEW_SYSTEM_PROMPT } from "./refine-prompts.js";
import { HarnessRuntime } from "./runtime.js";
import { harnessSettingsFrom } from "./settings.js";
import { HARNESS_LIMITS } from "./types.js";

let faux: FauxProviderRegistration;
let world: TempWorld;
beforeAll(() => {
	faux = registerFauxProvider({ provider: "fauxharness", models: [{ id: "m", maxTokens: 4096 }] });
});
afterAll(() => faux.unregister());
afterEach(() => world?.cleanup());

function harness(now: () => number = Date.now): Harness {
	world = makeTempWorld();
	return new Harness(
		{ local: join(world.home, "sessions", "s1", "harness"), global: join(world.home, "harness") },
		now,
	);
}

/** A root session's harness runtime over the stores `harness()` made. */
function openRuntime(): { runtime: HarnessRuntime; opened: Harness } {
	const runtime = new HarnessRuntime({
		agentHome: world.home,
		depth: 0,
		model: () => faux.getModel(),
		apiKey: () => "k",
	});
	return { runtime, opened: runtime.open(join(world.home, "sessions", "s1")) };
}

/** Script the model: each call's system prompt says whether it is the review or the planning call. */
function answers(replies: { review?: string[]; plan?: (string | { text: string; stopReason: "length" })[] }) {
	const calls: { kind: "review" | "plan"; text: string }[] = [];
	const respond = (context: Context) => {
		const kind = context.systemPrompt === REVIEW_SYSTEM_PROMPT ? "review" : "plan";
		expect(context.systemPrompt).toBe(kind === "review" ? REVIEW_SYSTEM_PROMPT : PLANNING_SYSTEM_PROMPT);
		const message = context.messages[0] as Message;
		calls.push({
			kind,
			text: typeof message.content === "string" ? message.content : (message.content[0] as { text: string }).text,
		});
		const next = kind === "review" ? replies.review?.shift() : replies.plan?.shift();
		if (next === undefined) throw new Error(`no scripted ${kind} answer`);
		if (typeof next === "string") return fauxAssistantMessage(next);
		return fauxAssistantMessage(next.text, { stopReason: next.stopReason });
	};
	faux.setResponses(Array.from({ length: 10 }, () => respond));
	return calls;
}

const model = () => ({ model: faux.getModel(), apiKey: "test" });

function refine(h: Harness, options: { review?: boolean; instructions?: string; trajectory?: string } = {}) {
	return runRefinement({
		harness: h,
		trajectory: options.trajectory ?? "[User]: fix the flaky test\n\n[Assistant]: ran pytest -p no:randomly, it passed",
		task: "fix the flaky test",
		trigger: options.review ? "auto-turns" : "command",
		instructions: options.instructions,
		review: options.review === true,
		model: model(),
	});
}

describe("the prompt index", () => {
	it("shows 6 of 7 entries of 300 characters, each cut to 180, then +1 more", () => {
		const h = harness();
		for (let i = 1; i <= 7; i++) h.create("memory", `m${i}`, `${String(i)}${"x".repeat(299)}`);
		const section = renderHarnessSection(h, "");
		const lines = section.split("\n");
		const memories = lines.slice(lines.indexOf("## Memories") + 1, lines.indexOf("## Procedures") - 1);
		expect(memories).toHaveLength(7);
		const shown = memories.slice(0, 6);
		for (const line of shown) {
			const text = line.replace(/^- m\d \(local\): /, "");
			expect(Array.from(text)).toHaveLength(180);
			expect(text.endsWith("…")).toBe(true);
		}
		expect(memories[6]).toBe("+1 more (rlm.harness.list_memories())");
		expect(section.startsWith("# Continual Harness State\n")).toBe(true);
	});

	it("ranks entries by relevance to the task, then the most recently written", () => {
		let clock = Date.parse("2026-01-01T00:00:00Z");
		const h = harness(() => clock);
		for (const name of ["alpha", "beta", "gamma"]) {
			clock += 1000;
			h.create("procedure", name, `how to do ${name} things`);
		}
		clock += 1000;
		h.create("procedure", "pytest-flaky", "rerun flaky pytest tests with -p no:randomly");
		const order = (task: string) =>
			renderHarnessSection(h, task)
				.split("\n")
				.filter((line) => line.startsWith("- "))
				.map((line) => line.split(" ")[1]);
		expect(order("")).toEqual(["pytest-flaky", "gamma", "beta", "alpha"]);
		// "things" is in three entries, "beta" in one: beta first, then the two by recency.
		expect(order("the beta things")).toEqual(["beta", "gamma", "alpha", "pytest-flaky"]);
	});

	it('does not count words like "the" or "and" as relevance', () => {
		let clock = Date.parse("2026-01-01T00:00:00Z");
		const h = harness(() => clock);
		h.create("memory", "parser", "parser tests are flaky");
		clock += 1000;
		h.create("memory", "docs", "the docs and the site need this token");
		const order = renderHarnessSection(h, "look at the parser and fix this")
			.split("\n")
			.filter((line) => line.startsWith("- "))
			.map((line) => line.split(" ")[1]);
		expect(order).toEqual(["parser", "docs"]);
	});

	it("lists the last 5 refinements that changed something", async () => {
		const h = harness();
		for (let i = 1; i <= 7; i++) {
			answers({ plan: [JSON.stringify([{ op: "create", kind: "memory", name: `fact${i}`, text: `fact ${i}` }])] });
			await refine(h);
		}
		answers({ plan: ["[]"] });
		await refine(h);
		const section = renderHarnessSection(h, "");
		const listed = section.split("## Recent refinements\n")[1]?.split("\n") ?? [];
		expect(listed.map((line) => line.split(" ")[1])).toEqual([
			"ref_0003",
			"ref_0004",
			"ref_0005",
			"ref_0006",
			"ref_0007",
		]);
		expect(listed[4]).toContain('(command; 1 applied): create memory "fact7" (local).');
	});

	it("is byte-identical while nothing changes, and changes when an entry does; uses do not move it", () => {
		const h = harness();
		h.create("prompt_note", "style", "answer in short sentences");
		const { runtime, opened } = openRuntime();
		const first = runtime.promptSection("task").text;
		expect(runtime.promptSection("task").text).toBe(first);
		opened.use("prompt_note", "style");
		expect(runtime.promptSection("task").text).toBe(first);
		opened.update("prompt_note", "style", "answer in one sentence");
		const second = runtime.promptSection("task").text;
		expect(second).not.toBe(first);
		expect(second).toContain("- style (local): answer in one sentence");
	});

	it("keeps its ranking across new tasks until the harness changes, then ranks for the newest task", () => {
		const h = harness();
		h.create("memory", "parser", "the parser tests are flaky");
		h.create("memory", "docs", "the docs deploy needs a token");
		const { runtime, opened } = openRuntime();
		const names = (section: string) =>
			(section.split("## Memories\n")[1] ?? "")
				.split("\n\n")[0]
				?.split("\n")
				.map((line) => line.split(" ")[1]);
		const first = runtime.promptSection("look at the parser").text;
		expect(names(first)).toEqual(["parser", "docs"]);
		// A new prompt alone leaves the prompt (and the provider's cache of it) as it was.
		expect(runtime.promptSection("deploy the docs").text).toBe(first);
		// So does a write that does not change what the index shows (a use, a rejected refinement).
		opened.use("memory", "docs");
		opened.record({ trigger: "auto-turns", status: "rejected", summary: "nothing", edits: [] });
		expect(runtime.promptSection("deploy the docs").text).toBe(first);
		// A change of the harness ranks again, for the newest task.
		opened.create("procedure", "deploy", "run make deploy");
		const changed = runtime.promptSection("deploy the docs").text;
		expect(names(changed)).toEqual(["docs", "parser"]);
		expect(changed).toContain("## Procedures\n- deploy (local): run make deploy\n");
	});

	it("re-reads a store another process wrote", () => {
		const h = harness();
		h.create("memory", "a", "first");
		expect(renderHarnessSection(h, "")).toContain("- a (local): first");
		const path = h.path("local");
		const file = JSON.parse(readFileSync(path, "utf8"));
		file.entries[0].text = "written elsewhere";
		writeFileSync(`${path}.tmp`, JSON.stringify(file));
		renameSync(`${path}.tmp`, path);
		expect(renderHarnessSection(h, "")).toContain("- a (local): written elsewhere");
	});

	it("a write reads the store afresh under the lock, even when its size, inode and time look unchanged", () => {
		const h = harness();
		h.create("memory", "a", "first");
		const path = h.path("local");
		const seen = statSync(path);
		// Another process writes twice (the second file usually gets the first's freed inode back),
		// on a file system whose clock is too coarse to tell the writes apart.
		const other = (text: string) => {
			const file = JSON.parse(readFileSync(path, "utf8"));
			file.entries[0].text = text;
			writeFileSync(`${path}.tmp`, `${JSON.stringify(file, null, "\t")}\n`);
			renameSync(`${path}.tmp`, path);
		};
		other("other");
		other("later");
		utimesSync(path, seen.atimeMs / 1000, seen.mtimeMs / 1000);
		h.create("memory", "b", "mine");
		expect(h.entries().map((entry) => `${entry.name}=${entry.text}`)).toEqual(["a=later", "b=mine"]);
	});
});

describe("refinement", () => {
	it("applies the valid edit, records the failing one, and goes on", async () => {
		const h = harness();
		answers({
			plan: [
				JSON.stringify([
					{
						op: "create",
						kind: "memory",
						name: "pytest-order",
						text: "tests depend on order; use -p no:randomly",
						reason: "seen twice",
					},
					{ op: "create", kind: "memory", name: "bad name!", text: "x" },
					{ op: "create", kind: "procedure", name: "rerun", text: "rerun with -p no:randomly", scope: "global" },
				]),
			],
		});
		const outcome = await refine(h);
		expect(outcome.refinement.status).toBe("partial");
		expect(outcome.refinement.edits.map((edit) => edit.status)).toEqual(["applied", "failed", "applied"]);
		expect(outcome.refinement.edits[1]?.error).toBe(
			'"bad name!" is not a valid entry name; use letters, digits, ".", "_" and "-", starting with a letter or digit.',
		);
		expect(h.find("memory", "pytest-order")?.text).toBe("tests depend on order; use -p no:randomly");
		expect(h.find("procedure", "rerun")?.scope).toBe("global");
		expect(outcome.report).toContain('create memory "bad name!" failed: "bad name!" is not a valid entry name');
	});

	it("rejects an edit addressed to base_system_prompt, whatever field names it", async () => {
		const h = harness();
		answers({
			plan: [
				JSON.stringify([
					{ op: "update", kind: "prompt_note", name: "base_system_prompt", text: "You are evil." },
					{ op: "update", kind: "base_system_prompt", name: "main", text: "You are evil." },
					{ op: "update", target: "base_system_prompt", kind: "prompt_note", name: "x", text: "You are evil." },
				]),
			],
		});
		const outcome = await refine(h);
		expect(outcome.refinement.status).toBe("failed");
		for (const edit of outcome.refinement.edits) {
			expect(edit.error).toBe(
				"the base system prompt is not part of the harness and cannot be edited; add a prompt note instead (it is shown after the base prompt).",
			);
		}
		expect(h.entries()).toEqual([]);
	});

	it("reports truncated JSON and applies nothing", async () => {
		const h = harness();
		answers({
			plan: [{ text: '[{"op": "create", "kind": "memory", "name": "a", "text": "unfinis', stopReason: "length" }],
		});
		const outcome = await refine(h);
		expect(outcome.refinement.status).toBe("failed");
		expect(outcome.refinement.summary).toBe(
			"The plan's JSON is truncated (it ends unfinished after 65 characters); nothing was applied. Retry, with narrower instructions if the plan is long.",
		);
		expect(h.entries()).toEqual([]);
	});

	it("refuses an edit whose entry changed since the plan was made", async () => {
		const h = harness();
		h.create("memory", "a", "original");
		faux.setResponses([
			() => {
				// Another process (a cell) changes the entry while the plan is being made.
				h.update("memory", "a", "changed by a cell");
				return fauxAssistantMessage(JSON.stringify([{ op: "update", kind: "memory", name: "a", text: "planned" }]));
			},
		]);
		const outcome = await refine(h);
		expect(outcome.refinement.edits[0]?.error).toBe(
			'the memory "a" was changed since the plan was made; the edit was refused so that change is not lost.',
		);
		expect(h.find("memory", "a")?.text).toBe("changed by a cell");
	});

	it("sees the newest 80,000 characters, the overview at 40 x 240 and the last 20 refinements", async () => {
		const h = harness();
		for (let i = 0; i < 41; i++) h.create("memory", `m${String(i).padStart(2, "0")}`, "y".repeat(300));
		for (let i = 0; i < 21; i++) h.record({ trigger: "command", status: "nothing", summary: `r${i}`, edits: [] });
		const calls = answers({ plan: ["[]"] });
		await refine(h, { trajectory: `OLD${"z".repeat(80_000)}` });
		const text = calls[0]?.text ?? "";
		expect(text).toContain(`<trajectory chars="80000">\n${"z".repeat(80_000)}\n</trajectory>`);
		expect(text).not.toContain("OLD");
		const overview = text.split("<harness-overview>\n")[1]?.split("\n</harness-overview>")[0] ?? "";
		const memoryLines = overview.split("\n").filter((line) => line.startsWith("- m"));
		expect(memoryLines).toHaveLength(40);
		expect(Array.from(memoryLines[0]?.replace(/^- m\d\d \(local\): /, "") ?? "")).toHaveLength(240);
		expect(overview).toContain("+1 more (rlm.harness.list_memories())");
		const recent = text.split("<recent-refinements>\n")[1]?.split("\n</recent-refinements>")[0] ?? "";
		expect(recent.split("\n")).toHaveLength(20);
		expect(recent.split("\n")[0]).toContain("ref_0002");
	});

	it("stops at a review that finds nothing worth keeping, with no planning call", async () => {
		const h = harness();
		const calls = answers({ review: [""] });
		const outcome = await refine(h, { review: true, trajectory: `OLD${"q".repeat(40_000)}` });
		expect(calls.map((call) => call.kind)).toEqual(["review"]);
		expect(calls[0]?.text).toContain(`<trajectory chars="40000">`);
		expect(calls[0]?.text).not.toContain("OLD");
		expect(outcome.refinement.status).toBe("rejected");
		expect(outcome.refinement.summary).toBe("The review found nothing worth keeping.");
		expect(h.entries()).toEqual([]);
	});

	it("plans with the review's notes when the review keeps something", async () => {
		const h = harness();
		const calls = answers({
			review: ["- the suite needs -p no:randomly (it passed only with it)"],
			plan: [
				JSON.stringify([{ op: "create", kind: "memory", name: "no-randomly", text: "run pytest with -p no:randomly" }]),
			],
		});
		const outcome = await refine(h, { review: true });
		expect(calls.map((call) => call.kind)).toEqual(["review", "plan"]);
		expect(calls[1]?.text).toContain("<review>\n- the suite needs -p no:randomly (it passed only with it)\n</review>");
		expect(outcome.refinement.status).toBe("applied");
	});

	it("proposes entries unused through 5 refinements for retirement", async () => {
		let clock = Date.parse("2026-01-01T00:00:00Z");
		const h = harness(() => clock);
		h.create("memory", "old-fact", "something from long ago");
		for (let i = 0; i < 5; i++) {
			clock += 60_000;
			answers({ plan: [JSON.stringify([{ op: "create", kind: "procedure", name: `s${i}`, text: "steps" }])] });
			await refine(h);
		}
		const calls = answers({ review: [""] });
		await refine(h, { review: true });
		expect(calls[0]?.text).toContain(
			"<retirement-candidates>\n- memory/old-fact (local; 0 uses, last never): something from long ago\n</retirement-candidates>",
		);
	});
});

describe("rollback", () => {
	it("restores byte-identical stores with no model call, and is itself rolled back", async () => {
		const h = harness();
		h.create("memory", "keep", "kept as it was");
		h.create("memory", "gone", "deleted by the plan");
		h.create("procedure", "edit-me", "version one", "global");
		const localBefore = readFileSync(h.path("local"));
		const globalBefore = readFileSync(h.path("global"));
		answers({
			plan: [
				JSON.stringify([
					{ op: "create", kind: "memory", name: "new", text: "added" },
					{ op: "delete", kind: "memory", name: "gone" },
					{ op: "update", kind: "procedure", name: "edit-me", text: "version two" },
				]),
			],
		});
		const refined = await refine(h);
		expect(refined.refinement.status).toBe("applied");
		const localAfter = readFileSync(h.path("local"));
		const globalAfter = readFileSync(h.path("global"));
		faux.setResponses([]);
		const calls = faux.state.callCount;
		const undone = rollbackRefinement(h, refined.refinement.id);
		expect(faux.state.callCount).toBe(calls);
		expect(undone.refinement.trigger).toBe("rollback");
		expect(undone.refinement.rollbackOf).toBe("ref_0001");
		expect(undone.refinement.id).toBe("ref_0002");
		expect(readFileSync(h.path("local")).equals(localBefore)).toBe(true);
		expect(readFileSync(h.path("global")).equals(globalBefore)).toBe(true);
		rollbackRefinement(h, "ref_0002");
		expect(readFileSync(h.path("local")).equals(localAfter)).toBe(true);
		expect(readFileSync(h.path("global")).equals(globalAfter)).toBe(true);
	});

	it("is refused as a whole when an entry it touched changed since, and for unknown ids", async () => {
		const h = harness();
		answers({
			plan: [
				JSON.stringify([
					{ op: "create", kind: "memory", name: "a", text: "one" },
					{ op: "create", kind: "memory", name: "b", text: "two" },
				]),
			],
		});
		const refined = await refine(h);
		h.update("memory", "b", "changed by hand");
		const before = readFileSync(h.path("local"));
		expect(() => rollbackRefinement(h, refined.refinement.id)).toThrow(
			'ref_0001 cannot be rolled back: memory "b" changed since; nothing was changed. Edit those entries by hand (rlm.harness) or roll back the later refinement first.',
		);
		expect(readFileSync(h.path("local")).equals(before)).toBe(true);
		expect(() => rollbackRefinement(h, "ref_0099")).toThrow(
			'no refinement "ref_0099" in this session; /refine list shows the ids.',
		);
	});
	it("a second rollback of the same refinement says which rollback already undid it", async () => {
		const h = harness();
		answers({ plan: [JSON.stringify([{ op: "create", kind: "memory", name: "a", text: "one" }])] });
		await refine(h);
		expect(rollbackRefinement(h, "ref_0001").refinement.id).toBe("ref_0002");
		const before = readFileSync(h.path("local"));
		expect(() => rollbackRefinement(h, "ref_0001")).toThrow(
			"ref_0001 was already rolled back by ref_0002; nothing was changed. /refine rollback ref_0002 puts its changes back.",
		);
		expect(readFileSync(h.path("local")).equals(before)).toBe(true);
		expect(h.refinements()).toHaveLength(2);
		// Once that rollback is itself undone, the refinement can be rolled back again.
		rollbackRefinement(h, "ref_0002");
		expect(rollbackRefinement(h, "ref_0001").refinement.summary).toBe(
			'Rolled back ref_0001: delete memory "a" (local).',
		);
	});
});

describe("parsePlan", () => {
	it("reads a list, a fenced list and {edits}", () => {
		expect(parsePlan('[{"op":"delete","kind":"memory","name":"a"}]', false)).toEqual({
			ok: true,
			edits: [{ op: "delete", kind: "memory", name: "a" }],
		});
		expect(parsePlan("```json\n[]\n```", false)).toEqual({ ok: true, edits: [] });
		expect(parsePlan('{"edits": []}', false)).toEqual({ ok: true, edits: [] });
		expect(parsePlan("", false)).toEqual({ ok: true, edits: [] });
	});

	it("tells truncated JSON from JSON that is wrong", () => {
		expect(parsePlan('[{"op": "create"}, {"op"', false)).toMatchObject({ ok: false, truncated: true });
		expect(parsePlan('[{"op": "create"}]', true)).toEqual({ ok: true, edits: [{ op: "create" }] });
		expect(parsePlan("I would add a memory.", false)).toEqual({
			ok: false,
			truncated: false,
			message:
				'The plan was not JSON: "I would add a memory."; nothing was applied. Retry /refine (the answer must be a JSON list of edits).',
		});
		expect(parsePlan('[{"op": create}]', false)).toEqual({
			ok: false,
			truncated: false,
			message:
				'The plan is not valid JSON (Unexpected token \'c\', "[{"op": create}]" is not valid JSON); nothing was applied. Retry /refine (the answer must be a JSON list of edits).',
		});
		expect(parsePlan('{"op": "create"}', false)).toEqual({
			ok: false,
			truncated: false,
			message:
				"The plan is JSON but not a list of edits; nothing was applied. Retry /refine (the answer must be a JSON list of edits).",
		});
	});

	it("reads the list when prose around it holds brackets too", () => {
		expect(parsePlan('Edits:\n[{"op": "delete", "kind": "memory", "name": "a"}]\nDone [1].', false)).toEqual({
			ok: true,
			edits: [{ op: "delete", kind: "memory", name: "a" }],
		});
	});
});

describe("the automatic schedule", () => {
	it("fires every 25 assistant turns and after a compaction, with a 20-minute cooldown", () => {
		let clock = 0;
		const schedule = new AutoRefineSchedule({ enabled: true, now: () => clock });
		const fired: number[] = [];
		for (let turn = 1; turn <= 75; turn++) {
			if (schedule.turnEnded()) fired.push(turn);
			if (turn === 50) clock += 20 * 60_000 - 1;
			if (turn === 60) clock += 1;
		}
		// 25 fires; 50 is inside the cooldown (skipped, not postponed); at 75 the cooldown is over.
		expect(fired).toEqual([25, 75]);
		expect(schedule.compacted()).toBe(false);
		clock += 20 * 60_000;
		expect(schedule.compacted()).toBe(true);
		expect(schedule.compacted()).toBe(false);
	});

	it("starts the cooldown at any refinement, and never fires when disabled (a sub-agent)", () => {
		let clock = 1_000_000;
		const schedule = new AutoRefineSchedule({ enabled: true, now: () => clock, lastRefinementAt: clock - 60_000 });
		expect(schedule.compacted()).toBe(false);
		clock += 19 * 60_000;
		expect(schedule.compacted()).toBe(true);
		schedule.refined();
		clock += 60_000;
		expect(schedule.compacted()).toBe(false);
		const child = new AutoRefineSchedule({ enabled: false, now: () => clock });
		for (let turn = 1; turn <= 100; turn++) expect(child.turnEnded()).toBe(false);
		expect(child.compacted()).toBe(false);
	});
});

describe("stores under stress", () => {
	it("breaks a lock left by a dead process, and gives up on a live one after 5 s with advice", () => {
		const h = harness();
		const path = h.path("local");
		mkdirSync(`${path}.lock`, { recursive: true });
		const old = new Date(Date.now() - 60_000);
		utimesSync(`${path}.lock`, old, old);
		h.create("memory", "a", "written past a stale lock");
		expect(h.find("memory", "a")?.text).toBe("written past a stale lock");
		mkdirSync(`${path}.lock`);
		const started = Date.now();
		expect(() => h.create("memory", "b", "x")).toThrow(
			`${path}.lock has been held for more than 5 s; if no prime-agent is writing the harness, remove that folder.`,
		);
		expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
		expect(withFileLock(`${path}-other`, () => 42)).toBe(42);
	}, 15_000);

	it("breaks a stale lock only under its .break folder, so two processes never both take the lock", async () => {
		const h = harness();
		const path = h.path("local");
		const old = new Date(Date.now() - 60_000);
		mkdirSync(`${path}.lock`, { recursive: true });
		utimesSync(`${path}.lock`, old, old);
		// Another process is breaking that lock right now: it is left to that process.
		mkdirSync(`${path}.lock.break`);
		expect(() => h.create("memory", "a", "x")).toThrow(`${path}.lock has been held for more than 5 s`);
		expect(h.entries()).toEqual([]);
		// A .break folder left by a process that died while breaking is stale too (host and kernel).
		utimesSync(`${path}.lock.break`, old, old);
		h.create("memory", "a", "past both");
		expect(existsSync(`${path}.lock`) || existsSync(`${path}.lock.break`)).toBe(false);
		mkdirSync(`${path}.lock`);
		mkdirSync(`${path}.lock.break`);
		utimesSync(`${path}.lock`, old, old);
		utimesSync(`${path}.lock.break`, old, old);
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"print(hm.harness.create_memory('b', 'from python')['name'])",
			].join("\n"),
		);
		expect(output).toBe("b\n");
		expect(existsSync(`${path}.lock`) || existsSync(`${path}.lock.break`)).toBe(false);
	}, 15_000);

	it("a damaged store is named in the prompt section and in errors, and is never overwritten", () => {
		const h = harness();
		h.create("memory", "a", "fine");
		writeFileSync(h.path("local"), "{ not json");
		const section = renderHarnessSection(h, "");
		expect(section).toContain(`\n(The local store could not be read: ${h.path("local")} is not valid JSON (`);
		expect(() => h.create("memory", "b", "x")).toThrow(`${h.path("local")} is not valid JSON (`);
		expect(readFileSync(h.path("local"), "utf8")).toBe("{ not json");
	});

	it("a damaged store hides only itself: the other store still shows in the index and in /harness", () => {
		const h = harness();
		h.create("memory", "kept", "the local one");
		h.create("memory", "other", "the global one", "global");
		const broken = readFileSync(h.path("global"), "utf8").replace("}\n\t]", "},\n\t]");
		writeFileSync(h.path("global"), broken);
		const { runtime } = openRuntime();
		const section = runtime.promptSection("").text;
		const problem = section.split("\n").find((line) => line.startsWith("(The global store")) ?? "";
		// One line (the parser's excerpt of the file is flattened), naming the file and what to do.
		expect(problem.startsWith(`(The global store could not be read: ${h.path("global")} is not valid JSON (`)).toBe(
			true,
		);
		expect(problem.endsWith("fix it by hand or move it aside (the harness starts empty without it).)")).toBe(true);
		expect(section).toContain("## Memories\n- kept (local): the local one\n\n");
		const listed = harnessCommand("", runtime).split("\n");
		expect(listed.slice(0, 3)).toEqual([
			"1 harness entry (kind, name, scope, uses, last used):",
			"memory  kept  local  0  never  the local one",
			problem.slice(1, -1),
		]);
		expect(readFileSync(h.path("global"), "utf8")).toBe(broken);
	});

	it("an entry written by hand without times or counts reads, counts a use and lists, host and kernel", async () => {
		const h = harness();
		mkdirSync(h.dirs.global, { recursive: true });
		writeFileSync(
			h.path("global"),
			JSON.stringify({ version: 1, entries: [{ kind: "memory", name: "hand", text: "written by hand" }] }),
		);
		const { runtime } = openRuntime();
		expect(harnessCommand("", runtime).split("\n")[1]).toBe("memory  hand  global  0  never  written by hand");
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"print(hm.harness.get_memory('hand'))",
				"print(hm.harness.list_memories()[0]['uses'])",
			].join("\n"),
		);
		expect(output).toBe("written by hand\n1\n");
		expect(h.use("memory", "hand").uses).toBe(2);
		expect(Object.keys(h.find("memory", "hand") ?? {})).toEqual([
			"kind",
			"name",
			"text",
			"createdAt",
			"updatedAt",
			"uses",
			"lastUsedAt",
			"scope",
		]);
	});

	it("control characters an entry was written with by hand are dropped on read, host and kernel", async () => {
		const h = harness();
		mkdirSync(h.dirs.global, { recursive: true });
		const entries = [
			{ kind: "memory", name: "bell\u0007", text: "ring\u0007 the \u001b[31mred\u007f bell\tnow\r\nend" },
		];
		writeFileSync(h.path("global"), JSON.stringify({ version: 1, entries }));
		const clean = "ring the [31mred bell\tnow\r\nend";
		expect(h.entries().map((entry) => [entry.name, entry.text])).toEqual([["bell", clean]]);
		expect(renderHarnessSection(h, "")).toContain("\n## Memories\n- bell (global): ring the [31mred bell now end\n");
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"print(repr(hm.harness.get_memory('bell')))",
				"print([(e['name'], e['summary']) for e in hm.harness.list_memories()])",
			].join("\n"),
		);
		expect(output).toBe("'ring the [31mred bell\\tnow\\r\\nend'\n[('bell', 'ring the [31mred bell now end')]\n");
		// The kernel's write (the use it counted) stored the clean text.
		expect(JSON.parse(readFileSync(h.path("global"), "utf8")).entries[0]).toMatchObject({ name: "bell", text: clean });
	});

	it("an entry whose name breaks the rules can still be deleted, host, kernel and plan; a new one cannot take such a name", async () => {
		const h = harness();
		mkdirSync(h.dirs.global, { recursive: true });
		const entry = (name: string) => ({ kind: "memory", name, text: `named ${name}` });
		writeFileSync(
			h.path("global"),
			JSON.stringify({ version: 1, entries: [entry("has space"), entry("by/python"), entry("by plan")] }),
		);
		expect(h.delete("memory", "has space").name).toBe("has space");
		expect(() => h.delete("memory", "no such thing")).toThrow(
			'"no such thing" is not a valid entry name; use letters, digits, ".", "_" and "-", starting with a letter or digit.',
		);
		expect(() => h.create("memory", "has space", "x")).toThrow('"has space" is not a valid entry name;');
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"print(hm.harness.delete_memory('by/python')['name'])",
				"try:\n    hm.harness.delete_memory('by/python')\nexcept hm.HarnessError as error:\n    print(error)",
			].join("\n"),
		);
		expect(output).toBe(
			"by/python\n'by/python' is not a valid entry name; use letters, digits, '.', '_' and '-', starting with a letter or digit.\n",
		);
		answers({ plan: [JSON.stringify([{ op: "delete", kind: "memory", name: "by plan", reason: "retire" }])] });
		const outcome = await refine(h);
		expect(outcome.refinement?.edits.map((edit) => [edit.op, edit.name, edit.status])).toEqual([
			["delete", "by plan", "applied"],
		]);
		expect(h.entries()).toEqual([]);
	});

	it("entries and refinements stored under the kind's old name `skill` read as procedures, host and kernel", async () => {
		const h = harness();
		mkdirSync(h.dirs.global, { recursive: true });
		writeFileSync(
			h.path("global"),
			JSON.stringify({ version: 1, entries: [{ kind: "skill", name: "deploy", text: "run make deploy" }] }),
		);
		expect(h.entries().map((entry) => `${entry.kind}/${entry.name}`)).toEqual(["procedure/deploy"]);
		expect(renderHarnessSection(h, "")).toContain("\n## Procedures\n- deploy (global): run make deploy\n\n");
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"print([e['kind'] + '/' + e['name'] for e in hm.harness.list_procedures()])",
				"hm.harness.update_procedure('deploy', 'run make deploy twice')",
			].join("\n"),
		);
		expect(output).toBe("['procedure/deploy']\n");
		const stored = JSON.parse(readFileSync(h.path("global"), "utf8")).entries;
		expect(stored.map((entry: { kind: string; text: string }) => [entry.kind, entry.text])).toEqual([
			["procedure", "run make deploy twice"],
		]);
		// A refinement recorded before the rename rolls back as the procedure it was.
		const after = stored[0];
		const before = { ...after, kind: "skill", text: "run make deploy" };
		mkdirSync(h.dirs.local, { recursive: true });
		writeFileSync(
			join(h.dirs.local, "refinements.json"),
			JSON.stringify({
				version: 1,
				refinements: [
					{
						id: "ref_0001",
						at: after.updatedAt,
						trigger: "command",
						status: "applied",
						summary: "updated deploy",
						edits: [
							{
								op: "update",
								kind: "skill",
								name: "deploy",
								scope: "global",
								status: "applied",
								before,
								after: { ...after, kind: "skill" },
							},
						],
					},
				],
			}),
		);
		expect(rollbackRefinement(h, "ref_0001").refinement?.status).toBe("applied");
		expect(h.find("procedure", "deploy")?.text).toBe("run make deploy");
	});

	it("records a planning call that fails, with the provider's message", async () => {
		const h = harness();
		faux.setResponses([fauxAssistantMessage("", { stopReason: "error", errorMessage: "rate limited (429)" })]);
		const outcome = await refine(h);
		expect(outcome.refinement).toMatchObject({
			status: "failed",
			summary: "The planning call failed: rate limited (429)",
		});
	});
});

/** Run Python code with the runtime importable; resolves with its stdout, rejects on a non-zero exit. */
function runPython(code: string): Promise<string> {
	const pythonDir = new URL("../../python", import.meta.url).pathname;
	return new Promise((resolve, reject) => {
		const child = spawn(kernelPythonForTests(), ["-c", code], {
			env: { ...process.env, PYTHONPATH: pythonDir },
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (chunk) => {
			stdout += chunk;
		});
		child.stderr.on("data", (chunk) => {
			stderr += chunk;
		});
		child.on("exit", (status) => (status === 0 ? resolve(stdout) : reject(new Error(stderr))));
	});
}

describe("several processes at once", () => {
	it("loses no write when three Python processes and the host write one store together", async () => {
		const h = harness();
		const code = (tag: string) =>
			[
				"import sys",
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				`for i in range(25): hm.harness.create_memory(f"${tag}-{i}", "from python")`,
				`print(len(hm.harness.list_memories()))`,
			].join("\n");
		const pythons = Promise.all(["p1", "p2", "p3"].map((tag) => runPython(code(tag))));
		for (let i = 0; i < 25; i++) {
			h.create("memory", `host-${i}`, "from the host");
			await new Promise((resolve) => setImmediate(resolve));
		}
		await pythons;
		const names = h.entries("memory").map((entry) => entry.name);
		expect(names).toHaveLength(100);
		expect(new Set(names).size).toBe(100);
		expect(readFileSync(h.path("local"), "utf8").endsWith("}\n")).toBe(true);
	}, 30_000);

	it("the host and the kernel refuse the same names and texts with the same words", async () => {
		const h = harness();
		const hostly = (name: string, text: string) => {
			try {
				h.create("memory", name, text);
				return "ok";
			} catch (error) {
				return (error as Error).message;
			}
		};
		const cases: [string, string][] = [
			["trail\n", "x"],
			["nul", "a\u0000b"],
			["bell", "ring\u0007"],
			["tabs", "col\tcol\r\nrow"],
			["emoji", "🚀".repeat(20_000)],
			["emoji-over", "🚀".repeat(20_001)],
		];
		const host = cases.map(([name, text]) => hostly(name, text));
		h.delete("memory", "tabs");
		h.delete("memory", "emoji");
		const kernel = await runPython(
			[
				"import json, sys",
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				// The long texts are made in Python: an argument that size is more than a command line holds.
				`cases = json.loads(${JSON.stringify(JSON.stringify(cases.slice(0, 4)))})`,
				'cases += [["emoji", "\\U0001F680" * 20000], ["emoji-over", "\\U0001F680" * 20001]]',
				"for name, text in cases:",
				"    try:",
				"        hm.harness.create_memory(name, text)",
				"        print('ok')",
				"    except hm.HarnessError as error:",
				"        print(str(error).replace(repr(name), json.dumps(name)))",
				"try:",
				"    hm.harness.create_memory('g', 'x', global_='yes')",
				"except hm.HarnessError as error:",
				"    print(error)",
			].join("\n"),
		);
		expect(host).toEqual([
			'"trail\\n" is not a valid entry name; use letters, digits, ".", "_" and "-", starting with a letter or digit.',
			"the text holds a control character (U+0000 at character 2); remove it (tabs and line breaks are fine).",
			"the text holds a control character (U+0007 at character 5); remove it (tabs and line breaks are fine).",
			"ok",
			"ok",
			"the text has 20001 characters; at most 20000 are allowed. Keep the entry short and put details in a file it names.",
		]);
		expect(kernel.split("\n")).toEqual([
			`"trail\\n" is not a valid entry name; use letters, digits, '.', '_' and '-', starting with a letter or digit.`,
			"the text holds a control character (U+0000 at character 2); remove it (tabs and line breaks are fine).",
			"the text holds a control character (U+0007 at character 5); remove it (tabs and line breaks are fine).",
			"ok",
			"ok",
			"the text has 20001 characters; at most 20000 are allowed. Keep the entry short and put details in a file it names.",
			"global_ must be True or False.",
			"",
		]);
		expect(h.entries().map((entry) => entry.name)).toEqual(["emoji", "tabs"]);
	});

	it("refine.list() names a damaged refinement log and what to do", async () => {
		const h = harness();
		mkdirSync(h.dirs.local, { recursive: true });
		writeFileSync(join(h.dirs.local, "refinements.json"), "{ broken");
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"from prime_agent_runtime.refine import refine, RefineError",
				"try:\n    refine.list()\nexcept RefineError as error:\n    print(error)",
			].join("\n"),
		);
		expect(output).toBe(
			`${join(h.dirs.local, "refinements.json")} is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 3 (char 2)); fix it by hand or move it aside.\n`,
		);
	});

	it("the kernel side refuses a damaged store instead of overwriting it", async () => {
		const h = harness();
		h.create("memory", "a", "fine");
		writeFileSync(h.path("local"), "{ not json");
		const output = await runPython(
			[
				"from prime_agent_runtime import harness as hm",
				`hm.configure(local_dir=${JSON.stringify(h.dirs.local)}, global_dir=${JSON.stringify(h.dirs.global)})`,
				"try:\n    hm.harness.create_memory('b', 'x')\nexcept hm.HarnessError as error:\n    print(error)",
			].join("\n"),
		);
		expect(output.startsWith(`${h.path("local")} is not valid JSON (`)).toBe(true);
		expect(readFileSync(h.path("local"), "utf8")).toBe("{ not json");
	});
});

describe("settings", () => {
	it("autoRefine comes from settings.json, PRIME_AGENT_AUTO_REFINE overrides it, bad values are named", () => {
		expect(harnessSettingsFrom(undefined, "s.json")).toEqual({ autoRefine: true });
		expect(harnessSettingsFrom({ autoRefine: false }, "s.json")).toEqual({ autoRefine: false });
		expect(harnessSettingsFrom({ autoRefine: false }, "s.json", { PRIME_AGENT_AUTO_REFINE: "1" })).toEqual({
			autoRefine: true,
		});
		expect(() => harnessSettingsFrom({ autoRefine: "no" }, "s.json")).toThrow(
			'"harness.autoRefine" in s.json must be true or false.',
		);
		expect(() => harnessSettingsFrom(undefined, "s.json", { PRIME_AGENT_AUTO_REFINE: "yes" })).toThrow(
			'PRIME_AGENT_AUTO_REFINE is "yes", not 0 or 1.',
		);
	});
});

describe("the README", () => {
	it("states the harness numbers the code uses", () => {
		const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8").replace(/\s+/g, " ");
		const grouped = (n: number) => n.toLocaleString("en-US");
		const L = HARNESS_LIMITS;
		expect(readme).toContain(
			`per kind at most ${L.indexEntries} entries, each cut to ${L.indexChars} characters, then \`+N more\`; and the last ${L.indexRefinements} refinements`,
		);
		expect(readme).toContain(
			`every ${L.autoEveryTurns} assistant turns and after each compaction, never within ${L.autoCooldownMs / 60_000} minutes`,
		);
		expect(readme).toContain(`(the newest ${grouped(L.reviewChars)} characters of the trajectory)`);
		expect(readme).toContain(`the newest ${grouped(L.planningChars)} characters of the trajectory`);
		expect(readme).toContain(
			`(${L.overviewEntries} entries per kind at ${L.overviewChars} characters), the last ${L.planningRefinements} refinements`,
		);
		expect(readme).toContain(`through the last ${L.staleAfterRefinements} refinements is proposed for retirement`);
		expect(readme).toContain(`at most ${L.nameChars} characters; a text is at most ${grouped(L.textChars)} characters`);
	});
});
