import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AssistantMessage, type Context, fauxAssistantMessage, type Message } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { REFINEMENT_ENTRY } from "../src/builtin/harness/index.js";
import { ExitCode, UserError } from "../src/errors.js";
import {
	HARNESS_INDEX_ENTRY,
	Harness,
	PLANNING_SYSTEM_PROMPT,
	REVIEW_SYSTEM_PROMPT,
	rankingKey,
} from "../src/harness/index.js";
import type { StartedSession } from "../src/startup/index.js";
import { type AgentStep, cell, lastToolResult, scriptAgents } from "./agent-scripts.js";

const sessions = useFauxSessions({ provider: "fauxhs", models: [{ id: "m", maxTokens: 4096 }] });
// The default for sessions, which the shared helper turns off for every other test file.
beforeEach(() => {
	sessions.newWorld({ PRIME_AGENT_AUTO_REFINE: "" });
});

/** The stores of a started session, read as the host reads them. */
function storesOf(started: StartedSession): Harness {
	return new Harness({
		local: join(started.session.artifactDir, "harness"),
		global: join(started.paths.root, "harness"),
	});
}

/** Script the agents, answering review and planning calls from their own queues (recorded apart). */
function script(
	scripts: Record<string, AgentStep[]>,
	refine: { review?: string[]; plan?: string[] } = {},
): { seen: Map<string, Context[]>; reviews: string[]; plans: string[] } {
	const reviews: string[] = [];
	const plans: string[] = [];
	const seen = scriptAgents(sessions, scripts, (context) => {
		const text = wireText(context.messages[0] as Message);
		if (context.systemPrompt === REVIEW_SYSTEM_PROMPT) {
			reviews.push(text);
			return fauxAssistantMessage(refine.review?.shift() ?? "");
		}
		if (context.systemPrompt === PLANNING_SYSTEM_PROMPT) {
			plans.push(text);
			return fauxAssistantMessage(refine.plan?.shift() ?? "[]");
		}
		return undefined;
	});
	return { seen, reviews, plans };
}

// Entries are stamped to the millisecond; the pause makes the local update the newer write, which
// the index ranks first (on a tie it would fall back to name order).
const KINDS_CELL = `
import time
h = rlm.harness
out = []
for kind in ("prompt_note", "memory", "procedure", "subagent"):
    getattr(h, f"create_{kind}")(f"{kind}-l", f"local {kind}")
    getattr(h, f"create_{kind}")(f"{kind}-g", f"global {kind}", global_=True)
    time.sleep(0.005)
    getattr(h, f"update_{kind}")(f"{kind}-l", f"local {kind} v2")
    out.append(getattr(h, f"get_{kind}")(f"{kind}-l"))
    lister = "list_memories" if kind == "memory" else f"list_{kind}s"
    out.append(sorted((e["name"], e["scope"], e["uses"]) for e in getattr(h, lister)()))
h.delete_memory("memory-g")
h.delete_procedure("procedure-l")
print(out)
print([e["name"] for e in h.list_memorys()], [e["name"] for e in h.list_procedures()])
`;

describe("the kernel API", () => {
	it("creates, updates, reads, lists and deletes every kind in both stores, in files the host reads", async () => {
		const started = await sessions.start();
		const { seen } = script({
			root: [cell(KINDS_CELL), fauxAssistantMessage("done"), fauxAssistantMessage("read them")],
		});
		expect((await started.agentSession.prompt("keep some notes")).status).toBe("ok");
		const printed = lastToolResult(seen.get("root")?.[1]);
		expect(printed).toBe(
			[
				"['local prompt_note v2', [('prompt_note-g', 'global', 0), ('prompt_note-l', 'local', 1)], 'local memory v2', [('memory-g', 'global', 0), ('memory-l', 'local', 1)], 'local procedure v2', [('procedure-g', 'global', 0), ('procedure-l', 'local', 1)], 'local subagent v2', [('subagent-g', 'global', 0), ('subagent-l', 'local', 1)]]",
				"['memory-l'] ['procedure-g']",
			].join("\n"),
		);
		const stores = storesOf(started);
		expect(stores.entries().map((entry) => `${entry.scope}/${entry.kind}/${entry.name}`)).toEqual([
			"local/prompt_note/prompt_note-l",
			"local/memory/memory-l",
			"local/subagent/subagent-l",
			"global/prompt_note/prompt_note-g",
			"global/procedure/procedure-g",
			"global/subagent/subagent-g",
		]);
		expect(stores.find("memory", "memory-l")).toMatchObject({ text: "local memory v2", uses: 1 });
		for (const scope of ["local", "global"] as const) expect(statSync(stores.path(scope)).mode & 0o777).toBe(0o600);
		// The host re-read the stores the kernel wrote: the next run's index lists them (the calls of
		// one run keep the section taken at its start).
		await started.agentSession.prompt("what did you keep?");
		const system = seen.get("root")?.[2]?.systemPrompt ?? "";
		expect(system).toContain("## Memories\n- memory-l (local): local memory v2\n");
		expect(system).toContain(
			"## Sub-agent specs\n- subagent-l (local): local subagent v2\n- subagent-g (global): global subagent",
		);
		expect(seen.get("root")?.[0]?.systemPrompt).toContain("## Memories\n(none)\n");
		expect(seen.get("root")?.[1]?.systemPrompt).toBe(seen.get("root")?.[0]?.systemPrompt);
	});

	it("refuses base_system_prompt, bad names, duplicates and missing entries with errors that say what to do", async () => {
		const started = await sessions.start();
		const code = [
			"for call in (",
			'    lambda: rlm.harness.create_prompt_note("base_system_prompt", "You are evil."),',
			'    lambda: rlm.harness.update_prompt_note("base_system_prompt", "You are evil."),',
			'    lambda: rlm.harness.create_memory("no spaces", "x"),',
			'    lambda: (rlm.harness.create_memory("dup", "x"), rlm.harness.create_memory("dup", "y")),',
			'    lambda: rlm.harness.delete_procedure("nothing"),',
			'    lambda: rlm.harness.create_memory("empty", "  "),',
			"):",
			"    try:",
			"        call()",
			"    except Exception as error:",
			"        print(type(error).__name__, error)",
		].join("\n");
		const { seen } = script({ root: [cell(code), fauxAssistantMessage("done")] });
		await started.agentSession.prompt("try bad edits");
		expect(lastToolResult(seen.get("root")?.[1]).split("\n")).toEqual([
			"HarnessError the base system prompt is not part of the harness and cannot be edited; add a prompt note instead (it is shown after the base prompt).",
			"HarnessError the base system prompt is not part of the harness and cannot be edited; add a prompt note instead (it is shown after the base prompt).",
			"HarnessError 'no spaces' is not a valid entry name; use letters, digits, '.', '_' and '-', starting with a letter or digit.",
			"HarnessError a memory named 'dup' already exists (local); use update_memory('dup', text).",
			"HarnessError no procedure named 'nothing'; rlm.harness.list_procedures() lists them.",
			"HarnessError the text must be a non-empty string.",
		]);
		expect(
			storesOf(started)
				.entries()
				.map((entry) => entry.name),
		).toEqual(["dup"]);
	});
});

describe("the system prompt", () => {
	it("is the base prompt, then the harness section, byte-identical across calls until a run starts after a change", async () => {
		const started = await sessions.start();
		storesOf(started).create("memory", "flaky", "the parser tests are flaky under xdist");
		storesOf(started).create("memory", "docs", "the docs deploy needs DOCS_TOKEN");
		const { seen } = script({
			root: [
				cell("x = 1"),
				cell("y = 2"),
				fauxAssistantMessage("first done"),
				cell("z = 3"),
				cell('rlm.harness.create_procedure("twice", "run the suite twice")'),
				fauxAssistantMessage("second done"),
				fauxAssistantMessage("third done"),
			],
		});
		await started.agentSession.prompt("look at the parser");
		// A prompt the other entry matches better: the index keeps its order until the harness changes.
		await started.agentSession.prompt("deploy the docs");
		await started.agentSession.prompt("deploy the docs again");
		const prompts = (seen.get("root") ?? []).map((context) => context.systemPrompt as string);
		expect(prompts).toHaveLength(7);
		// The procedure written during the second run reaches the model when the third starts, not mid-run.
		for (const prompt of prompts.slice(1, 6)) expect(prompt).toBe(prompts[0]);
		expect(prompts[6]).not.toBe(prompts[0]);
		expect(prompts[6]).toContain("- twice (local): run the suite twice");
		// The first ranking and that boundary are recorded on the branch, each with the section it starts.
		const sectionOf = (prompt: string | undefined) => prompt?.slice(prompt.indexOf("# Continual Harness State")) ?? "";
		const hash = (text: string) => createHash("sha256").update(text).digest("hex");
		const boundaries = started.session.customEntries(HARNESS_INDEX_ENTRY).map((entry) => entry.data);
		// Newest first.
		expect(boundaries).toEqual([
			{ rankedFor: rankingKey("deploy the docs again"), sha256: hash(sectionOf(prompts[6])) },
			{ rankedFor: rankingKey("look at the parser"), sha256: hash(sectionOf(prompts[0])) },
		]);
		const base = started.agentSession.agent.state.systemPrompt;
		expect(prompts[0]?.startsWith(`${base}\n\n`)).toBe(true);
		const section = prompts[0]?.slice(prompts[0].indexOf("# Continual Harness State")) ?? "";
		expect(section).toContain(
			"## Memories\n- flaky (local): the parser tests are flaky under xdist\n- docs (local): the docs deploy needs DOCS_TOKEN\n",
		);
		// The procedure changed the harness: ranked again, for the newest prompt.
		expect(prompts[6]).toContain(
			"## Memories\n- docs (local): the docs deploy needs DOCS_TOKEN\n- flaky (local): the parser tests are flaky under xdist\n",
		);
		// Nothing of the harness is inside the base prompt.
		expect(base).not.toContain("flaky under xdist");
	});
});

describe("the system prompt at a compaction", () => {
	it("takes the section afresh after a compaction during a run, where the conversation is re-sent anyway", async () => {
		sessions.world.writeHome("settings.json", { compaction: { keepRecentTokens: 50 } });
		const started = await sessions.start();
		const seen = scriptAgents(
			sessions,
			{
				root: [
					cell('rlm.harness.create_memory("mid", "written mid-run")\nprint("t" * 4000)'),
					cell("print(await compact.run())"),
					fauxAssistantMessage("done"),
				],
			},
			(context) => {
				if (context.systemPrompt?.startsWith("You summarise")) return fauxAssistantMessage("## Goal\nSummary.");
				if (context.systemPrompt === REVIEW_SYSTEM_PROMPT) return fauxAssistantMessage("");
				return undefined;
			},
		);
		expect((await started.agentSession.prompt("work, then compact")).status).toBe("ok");
		const prompts = (seen.get("root") ?? []).map((context) => context.systemPrompt as string);
		expect(prompts).toHaveLength(3);
		expect(prompts[1]).toBe(prompts[0]);
		expect(prompts[0]).not.toContain("- mid (local)");
		expect(prompts[2]).toContain("- mid (local): written mid-run");
		// Recorded right after the compaction, before the call that sends the new section.
		const types = started.session
			.branch()
			.map((entry) => (entry.type === "custom" ? entry.customType : entry.type))
			.filter((type) => type === "compaction" || type === HARNESS_INDEX_ENTRY);
		expect(types).toEqual(["compaction", HARNESS_INDEX_ENTRY]);
	});
});

describe("a damaged store", () => {
	it("warns the user once and keeps the session's entries in the index", async () => {
		const started = await sessions.start();
		const stores = storesOf(started);
		stores.create("memory", "local-one", "still shown");
		mkdirSync(stores.dirs.global, { recursive: true });
		writeFileSync(stores.path("global"), "{ not json");
		const notices: string[] = [];
		started.agentSession.onNotice((notice) => {
			if (notice.type === "extension_problem") notices.push(`${notice.path}: ${notice.message}`);
		});
		const { seen } = script({ root: [cell("x = 1"), fauxAssistantMessage("done")] });
		await started.agentSession.prompt("go on");
		const problem = `The global store could not be read: ${stores.path("global")} is not valid JSON (`;
		expect(notices).toHaveLength(1);
		expect(notices[0]?.startsWith(`builtin:harness: ${problem}`)).toBe(true);
		for (const context of seen.get("root") ?? []) {
			expect(context.systemPrompt).toContain(`\n(${problem}`);
			expect(context.systemPrompt).toContain("## Memories\n- local-one (local): still shown\n");
		}
	});
});

describe("rlm.harness in a cell with a damaged global store", () => {
	it("list_memories() warns at each call and lists the session's entries", async () => {
		const started = await sessions.start();
		const stores = storesOf(started);
		stores.create("memory", "local-one", "still shown");
		mkdirSync(stores.dirs.global, { recursive: true });
		writeFileSync(stores.path("global"), "{ not json");
		const run = await started.kernel.run(
			"print([e['name'] for e in rlm.harness.list_memories()])\nprint(len(rlm.harness.list_memories()))",
		);
		expect(run.cell.error).toBeUndefined();
		expect(run.cell.stdout).toBe("['local-one']\n1\n");
		const warning = `HarnessWarning: the global store could not be read, so its entries are left out: ${stores.path("global")} is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 3 (char 2)); fix it by hand or move it aside.`;
		const warnings = run.cell.stderr
			.split("\n")
			.filter((line) => line.includes("HarnessWarning"))
			.map((line) => line.slice(line.indexOf("HarnessWarning")));
		expect(warnings).toEqual([warning, warning]);
		// Warned again in a later cell, and reading the session's entry needs only its own store.
		const again = await started.kernel.run("rlm.harness.list_memories()\nprint(rlm.harness.get_memory('local-one'))");
		expect(again.cell.stdout).toBe("still shown\n");
		expect(again.cell.stderr.split("\n").filter((line) => line.endsWith(warning))).toHaveLength(1);
	});
});

describe("one skills concept in the system prompt", () => {
	it("skills are the packages of # Skills; the harness's text entries are procedures, byte-stable across turns", async () => {
		const skillDir = join(sessions.world.home, "skills", "csv-stats");
		mkdirSync(skillDir, { recursive: true });
		writeFileSync(join(skillDir, "SKILL.md"), "---\nname: csv-stats\ndescription: Column statistics.\n---\nUse it.\n");
		writeFileSync(join(skillDir, "__init__.py"), "");
		const started = await sessions.start();
		storesOf(started).create("procedure", "twice", "run the suite twice");
		const { seen } = script({
			root: [cell("x = 1"), fauxAssistantMessage("done"), fauxAssistantMessage("again")],
		});
		await started.agentSession.prompt("look");
		await started.agentSession.prompt("look again");
		const prompts = (seen.get("root") ?? []).map((context) => context.systemPrompt as string);
		expect(prompts).toHaveLength(3);
		expect(new Set(prompts).size).toBe(1);
		const headings = (prompts[0] ?? "").split("\n").filter((line) => /^#+ .*skill/i.test(line));
		expect(headings).toEqual(["# Skills"]);
		expect(prompts[0]).toContain("\n- csv-stats: Column statistics.");
		expect(prompts[0]).toContain("\n## Procedures\n- twice (local): run the suite twice\n");
		const renamed = await started.kernel.run("rlm.harness.get_skill('twice')");
		expect(renamed.cell.error?.evalue).toBe(
			"rlm.harness.get_skill is now rlm.harness.get_procedure (a harness procedure is a text entry; skills are the Python packages of skills.load(name)).",
		);
	});
});

describe("resume and fork", () => {
	it("a resumed session keeps its store; a fork starts with a copy of it and its refinement log", async () => {
		const first = await sessions.start();
		script({ root: [cell('rlm.harness.create_memory("m", "kept across")'), fauxAssistantMessage("ok")] });
		await first.agentSession.prompt("remember");
		storesOf(first).record({ trigger: "command", status: "nothing", summary: "an earlier one", edits: [] });
		await first.dispose();
		const resumed = await sessions.start({ resume: first.session.id });
		expect(storesOf(resumed).find("memory", "m")?.text).toBe("kept across");
		const forked = await sessions.start({ fork: first.session.id });
		expect(forked.session.artifactDir).not.toBe(first.session.artifactDir);
		expect(storesOf(forked).find("memory", "m")?.text).toBe("kept across");
		expect(
			storesOf(forked)
				.refinements()
				.map((refinement) => refinement.id),
		).toEqual(["ref_0001"]);
		expect(statSync(storesOf(forked).path("local")).mode & 0o777).toBe(0o600);
	});
});

/** The system prompt of every provider call of the root agent, in order. */
const systemPrompts = (seen: Map<string, Context[]>) =>
	(seen.get("root") ?? []).map((context) => context.systemPrompt as string);
/** How many calls sent a system prompt other than the call before them. */
const changes = (prompts: string[]) => prompts.filter((prompt, i) => i > 0 && prompt !== prompts[i - 1]).length;
/** The names of the `## Memories` listing of a system prompt, in order. */
const memories = (prompt: string | undefined) =>
	(prompt?.split("## Memories\n")[1]?.split("\n\n")[0] ?? "").split("\n").map((line) => line.split(" ")[1]);
const indexEntries = (started: StartedSession) => started.session.customEntries(HARNESS_INDEX_ENTRY).length;

describe("the ranking is the session's state", () => {
	/** A session that ranked its two memories for "look at the parser" (the parser one first), then ended. */
	async function rankedSession(): Promise<StartedSession> {
		const first = await sessions.start();
		storesOf(first).create("memory", "flaky", "the parser tests are flaky under xdist");
		storesOf(first).create("memory", "docs", "the docs deploy needs DOCS_TOKEN");
		await first.agentSession.prompt("look at the parser");
		await first.dispose();
		return first;
	}

	it("-c sends the system prompt of before the resume byte for byte; a harness change alters it exactly once", async () => {
		const { seen } = script({
			root: [
				cell("x = 1"),
				fauxAssistantMessage("first done"),
				cell("y = 2"),
				fauxAssistantMessage("second done"),
				cell('rlm.harness.create_procedure("deploy", "run make deploy")'),
				fauxAssistantMessage("third done"),
				fauxAssistantMessage("fourth done"),
			],
		});
		const first = await rankedSession();
		// A prompt the docs memory matches better: a new ranking would put it first.
		const resumed = await sessions.start({ continueLatest: true });
		expect(resumed.session.id).toBe(first.session.id);
		await resumed.agentSession.prompt("deploy the docs");
		await resumed.agentSession.prompt("add a deploy procedure");
		await resumed.dispose();
		const again = await sessions.start({ continueLatest: true });
		await again.agentSession.prompt("go on with the docs");

		const prompts = systemPrompts(seen);
		expect(prompts).toHaveLength(7);
		expect(prompts[2]).toBe(prompts[1]);
		expect(memories(prompts[2])).toEqual(["flaky", "docs"]);
		// The procedure written by the 5th call's cell is the one change: it reaches the model when the
		// next run starts (after the second resume), ranked again for the newest prompt.
		expect(prompts.slice(0, 6).every((prompt) => prompt === prompts[0])).toBe(true);
		expect(prompts[6]).toContain("## Procedures\n- deploy (local): run make deploy\n");
		expect(memories(prompts[6])).toEqual(["docs", "flaky"]);
		expect(changes(prompts)).toBe(1);
		// Recorded twice: when first ranked, and at the change.
		expect(indexEntries(again)).toBe(2);
		expect(again.extensions.problems).toEqual([]);
	});

	it("a harness changed while the session was away is ranked again once, for the new prompt", async () => {
		const { seen } = script({
			root: [cell("x = 1"), fauxAssistantMessage("first done"), cell("y = 2"), fauxAssistantMessage("done")],
		});
		const first = await rankedSession();
		storesOf(first).create("prompt_note", "style", "answer in short sentences", "global");
		const resumed = await sessions.start({ continueLatest: true });
		await resumed.agentSession.prompt("deploy the docs");
		const prompts = systemPrompts(seen);
		expect(prompts).toHaveLength(4);
		expect(memories(prompts[1])).toEqual(["flaky", "docs"]);
		expect(memories(prompts[2])).toEqual(["docs", "flaky"]);
		expect(prompts[2]).toContain("- style (global): answer in short sentences");
		expect(prompts[3]).toBe(prompts[2]);
		expect(changes(prompts)).toBe(1);
		expect(indexEntries(resumed)).toBe(2);
	});

	it("with at most one entry of each kind there is no order to keep: nothing is recorded, and -c sends the same", async () => {
		const { seen } = script({ root: [fauxAssistantMessage("first done"), fauxAssistantMessage("done")] });
		const first = await sessions.start();
		storesOf(first).create("memory", "flaky", "the parser tests are flaky under xdist");
		storesOf(first).create("procedure", "deploy", "run make deploy");
		await first.agentSession.prompt("look at the parser");
		await first.dispose();
		const resumed = await sessions.start({ continueLatest: true });
		await resumed.agentSession.prompt("deploy the docs");
		const prompts = systemPrompts(seen);
		expect(prompts).toHaveLength(2);
		expect(prompts[1]).toBe(prompts[0]);
		expect(indexEntries(resumed)).toBe(0);
	});

	it("a recorded ranking that is not valid is said once and ranked again, then recorded anew", async () => {
		const { seen } = script({
			root: [cell("x = 1"), fauxAssistantMessage("first done"), cell("y = 2"), fauxAssistantMessage("done")],
		});
		const first = await rankedSession();
		const lines = readFileSync(first.session.path, "utf8").split("\n");
		const at = lines.findIndex((line) => line.includes(`"customType":"${HARNESS_INDEX_ENTRY}"`));
		const entry = JSON.parse(lines[at] as string);
		entry.data = { rankedFor: 42, sha256: entry.data.sha256 };
		lines[at] = JSON.stringify(entry);
		writeFileSync(first.session.path, lines.join("\n"));

		const resumed = await sessions.start({ continueLatest: true });
		const notices: string[] = [];
		resumed.agentSession.onNotice((notice) => {
			if (notice.type === "extension_problem") notices.push(`${notice.path}: ${notice.message}`);
		});
		await resumed.agentSession.prompt("deploy the docs");
		expect(notices).toEqual([
			`builtin:harness: The harness index recorded in this session (entry ${entry.id}) cannot be used: rankedFor is not a string. It is ranked again for the next prompt, so the system prompt may differ from the one before; nothing else is affected.`,
		]);
		const prompts = systemPrompts(seen);
		expect(memories(prompts[2])).toEqual(["docs", "flaky"]);
		expect(prompts[3]).toBe(prompts[2]);
		const newest = resumed.session.customEntries(HARNESS_INDEX_ENTRY)[0];
		expect(newest?.id).not.toBe(entry.id);
		expect((newest?.data as { rankedFor?: string } | undefined)?.rankedFor).toBe("deploy docs");
	});
});

describe("/refine, /harness and refine.run()", () => {
	it("applies the plan's valid edits, records the failing one, and shows them in /refine list and /harness", async () => {
		const started = await sessions.start();
		const { plans } = script(
			{ root: [cell("print('pytest -p no:randomly passed')"), fauxAssistantMessage("fixed")] },
			{
				plan: [
					JSON.stringify([
						{ op: "create", kind: "memory", name: "no-randomly", text: "pytest passes only with -p no:randomly" },
						{ op: "update", kind: "procedure", name: "missing", text: "x" },
						{ op: "create", kind: "prompt_note", name: "base_system_prompt", text: "x" },
					]),
				],
			},
		);
		await started.agentSession.prompt("fix the flaky suite");
		const outcome = await started.agentSession.prompt("/refine keep what helps with pytest");
		expect(outcome.status).toBe("ok");
		expect(plans).toHaveLength(1);
		expect(plans[0]).toContain(
			"<instructions-from-the-user>\nkeep what helps with pytest\n</instructions-from-the-user>",
		);
		expect(plans[0]).toContain("[User]: fix the flaky suite");
		const report = outcome.command?.message ?? "";
		expect(report.split("\n").slice(1)).toEqual([
			'  create memory "no-randomly" (local)',
			'  update procedure "missing" failed: no procedure named "missing" to update.',
			'  create prompt_note "base_system_prompt" failed: the base system prompt is not part of the harness and cannot be edited; add a prompt note instead (it is shown after the base prompt).',
		]);
		expect(report).toMatch(/^ref_0001 \S+ command partial: /);
		expect(storesOf(started).find("memory", "no-randomly")?.text).toBe("pytest passes only with -p no:randomly");
		const list = (await started.agentSession.prompt("/refine list")).command?.message ?? "";
		expect(list.split("\n")[0]).toBe("1 refinement(s), oldest first:");
		expect(list).toContain("ref_0001");
		const browse = (await started.agentSession.prompt("/harness")).command?.message ?? "";
		expect(browse.split("\n")[1]).toBe("memory  no-randomly  local  0  never  pytest passes only with -p no:randomly");
		const shown = (await started.agentSession.prompt("/harness show memory no-randomly")).command?.message ?? "";
		expect(shown.split("\n")[1]).toBe("pytest passes only with -p no:randomly");
		// The refinement is on the branch too (a custom entry, never sent to the model).
		const noted = started.session.customEntries(REFINEMENT_ENTRY);
		expect(noted.map((entry) => (entry.data as { id: string }).id)).toEqual(["ref_0001"]);
	});

	it("without a key, /refine fails as a prompt would (exit 3) while /harness and /refine list work", async () => {
		sessions.world.writeHome("auth.json", {});
		const started = await sessions.start({ allowMissingKey: true });
		expect((await started.agentSession.prompt("/harness")).status).toBe("ok");
		expect((await started.agentSession.prompt("/refine list")).command?.message).toBe(
			"No refinements in this session yet; /refine runs one.",
		);
		const failure = await started.agentSession.prompt("/refine").catch((error: Error) => error);
		expect(failure).toBeInstanceOf(UserError);
		expect((failure as UserError).exitCode).toBe(ExitCode.missingCredentials);
		expect(storesOf(started).refinements()).toEqual([]);
	});

	it("reports a truncated plan and changes nothing", async () => {
		const started = await sessions.start();
		script(
			{ root: [fauxAssistantMessage("ok")] },
			{ plan: ['[{"op": "create", "kind": "memory", "name": "a", "text": "cut'] },
		);
		await started.agentSession.prompt("hello");
		const outcome = await started.agentSession.prompt("/refine");
		expect(outcome.command?.message).toMatch(
			/^ref_0001 \S+ command failed: The plan's JSON is truncated \(it ends unfinished after 61 characters\); nothing was applied\./,
		);
		expect(storesOf(started).entries()).toEqual([]);
	});

	it("rolls back with no model call, and rolls the rollback back; refine.run() works from a cell", async () => {
		const started = await sessions.start();
		const stores = storesOf(started);
		stores.create("memory", "kept", "was here before", "global");
		const globalBefore = readFileSync(stores.path("global"));
		const { seen, plans } = script(
			{
				root: [
					cell(
						"r = await refine.run('keep the note')\nprint(r['id'], r['status'])\nprint(refine.list()[0]['trigger'])",
					),
					fauxAssistantMessage("refined"),
				],
			},
			{
				plan: [
					JSON.stringify([
						{ op: "update", kind: "memory", name: "kept", text: "changed by the plan" },
						{ op: "create", kind: "procedure", name: "s", text: "steps" },
					]),
				],
			},
		);
		await started.agentSession.prompt("refine from the kernel");
		expect(lastToolResult(seen.get("root")?.[1])).toBe("ref_0001 applied\nkernel");
		expect(plans).toHaveLength(1);
		const globalAfter = readFileSync(stores.path("global"));
		const localAfter = readFileSync(stores.path("local"));
		const undone = await started.agentSession.prompt("/refine rollback ref_0001");
		expect(undone.command?.message).toMatch(/^ref_0002 \S+ rollback of ref_0001 applied: Rolled back ref_0001: /);
		expect(plans).toHaveLength(1);
		expect(readFileSync(stores.path("global")).equals(globalBefore)).toBe(true);
		expect(stores.find("procedure", "s")).toBeUndefined();
		await started.agentSession.prompt("/refine rollback ref_0002");
		expect(readFileSync(stores.path("global")).equals(globalAfter)).toBe(true);
		expect(readFileSync(stores.path("local")).equals(localAfter)).toBe(true);
		const bad = await started.agentSession.prompt("/refine rollback ref_0042");
		expect(bad.status).toBe("error");
		expect(bad.command?.message).toBe(
			'The command /refine failed: no refinement "ref_0042" in this session; /refine list shows the ids.',
		);
	});
});

describe("automatic refinement", () => {
	it("asks the review after 25 assistant turns, stops when it rejects, and waits out the cooldown at 50", async () => {
		const started = await sessions.start();
		const turns = (count: number, last: string): AssistantMessage[] => [
			...Array.from({ length: count - 1 }, (_, i) => cell(`t = ${i}`)),
			fauxAssistantMessage(last),
		];
		const { reviews, plans, seen } = script(
			{ root: [...turns(20, "twenty"), ...turns(30, "fifty")] },
			{ review: [""] },
		);
		await started.agentSession.prompt("work for a while");
		expect(reviews).toHaveLength(0);
		await started.agentSession.prompt("work some more");
		expect(seen.get("root")).toHaveLength(50);
		// It runs in the background: the turns went on while it did.
		await vi.waitFor(() => expect(storesOf(started).refinements()).toHaveLength(1), { timeout: 60_000 });
		expect(reviews).toHaveLength(1);
		expect(plans).toHaveLength(0);
		expect(reviews[0]).toContain("[User]: work for a while");
		const log = storesOf(started).refinements();
		expect(log.map((refinement) => [refinement.trigger, refinement.status, refinement.summary])).toEqual([
			["auto-turns", "rejected", "The review found nothing worth keeping."],
		]);
	});

	it("runs after a compaction, with the review first", async () => {
		sessions.world.writeHome("settings.json", { compaction: { keepRecentTokens: 1 } });
		const started = await sessions.start();
		const { reviews, plans } = script(
			{ root: [cell("a = 1"), fauxAssistantMessage("one"), cell("b = 2"), fauxAssistantMessage("two")] },
			{
				review: ["- b = 2 is the answer (printed)"],
				plan: [JSON.stringify([{ op: "create", kind: "memory", name: "b", text: "b is 2" }])],
			},
		);
		await started.agentSession.prompt("first");
		await started.agentSession.prompt("second");
		sessions.faux.appendResponses([fauxAssistantMessage("## Goal\nsummary")]);
		const compacted = await started.agentSession.prompt("/compact");
		expect(compacted.status).toBe("ok");
		await vi.waitFor(() => expect(storesOf(started).refinements()).toHaveLength(1), { timeout: 60_000 });
		expect(reviews).toHaveLength(1);
		expect(plans).toHaveLength(1);
		expect(storesOf(started).refinements()[0]).toMatchObject({ trigger: "auto-compaction", status: "applied" });
	});

	it("never runs in a sub-agent; rlm(spec=name) gives the child the spec and counts a use", async () => {
		const started = await sessions.start();
		storesOf(started).create("subagent", "counter", "You count things carefully and report the number.", "global");
		const childTurns = [
			...Array.from({ length: 29 }, (_, i) => cell(`n = ${i}`)),
			cell('await agent_message.send("counted 29", receiver_role="parent")'),
			fauxAssistantMessage("sent"),
		];
		const { seen, reviews } = script({
			root: [
				cell('h = await rlm("count the lines", name="counter", spec="counter")'),
				fauxAssistantMessage("spawned"),
				fauxAssistantMessage("got it"),
			],
			counter: childTurns,
		});
		await started.agentSession.prompt("spawn a counter");
		await started.whenSettled();
		expect(seen.get("counter")).toHaveLength(31);
		expect(reviews).toHaveLength(0);
		const first = wireText(seen.get("counter")?.[0]?.messages[0] as Message);
		expect(first).toContain(
			'[Your role, from the harness sub-agent spec "counter":]\nYou count things carefully and report the number.\n\n[The task:]\ncount the lines',
		);
		expect(storesOf(started).find("subagent", "counter")?.uses).toBe(1);
	});

	it("refuses rlm(spec=...) naming no spec", async () => {
		const started = await sessions.start();
		const { seen } = script({
			root: [
				cell(
					'try:\n    await rlm("x", spec="nobody")\nexcept Exception as error:\n    print(type(error).__name__, error)',
				),
				fauxAssistantMessage("ok"),
			],
		});
		await started.agentSession.prompt("spawn");
		expect(lastToolResult(seen.get("root")?.[1])).toBe(
			`RlmError rlm(spec="nobody"): no subagent named "nobody"; rlm.harness.list_subagents() lists them.`,
		);
	});
});
