import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "@mariozechner/pi-ai";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { SYSTEM_PROMPT_ENTRY } from "../src/orchestrator/index.js";
import { cell, scriptAgents } from "./agent-scripts.js";
import { FIXTURE } from "./mcp-fixture.js";
import { cachedShare, expectPromptOnlyGrows } from "./prompt-growth.js";

const sessions = useFauxSessions({ provider: "fauxg", models: [{ id: "g" }] });

const waitFor = (path: string) =>
	`import os, asyncio\nwhile not os.path.exists(${JSON.stringify(path)}): await asyncio.sleep(0.05)`;
const touch = (path: string) => `with open(${JSON.stringify(path)}, "w") as marker: marker.write("1")`;

/** The sections every request of a session with MCP, skills and Prime Context carries. */
const SECTIONS = ["Prime Context policy:", "# Skills", "# MCP servers"];

function configureMcp(): void {
	sessions.world.writeHome("mcp.json", {
		mcpServers: { fixture: { command: process.execPath, args: [FIXTURE] } },
	});
}

function requestsOf(seen: Map<string, Context[]>, agent: string): Context[] {
	return seen.get(agent) ?? [];
}

it("turns woken by a child's notice keep the session's system prompt and only append, with MCP, skills and Prime Context", {
	timeout: 120_000,
}, async () => {
	configureMcp();
	const started = await sessions.start();
	// The kid answers once the parent's prompt has ended, so its notice starts a turn of its own.
	const go = join(sessions.world.project, "go");
	const seen = scriptAgents(sessions, {
		root: [
			cell('h = await rlm("say hi", name="kid")'),
			fauxAssistantMessage("Waiting for kid."),
			fauxAssistantMessage("kid said hi."),
			fauxAssistantMessage("Still here."),
		],
		kid: [cell(waitFor(go)), fauxAssistantMessage("hi")],
	});
	expect((await started.agentSession.prompt("start a kid")).status).toBe("ok");
	writeFileSync(go, "1");
	await started.whenSettled();
	expect((await started.agentSession.prompt("anything else?")).status).toBe("ok");

	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(4);
	// The third call was woken by the kid's notice, not by a prompt.
	expect(wireText(root[2]?.messages.at(-1) as never)).toContain("[rlm notice: completed_without_reply]");
	for (const request of root) for (const section of SECTIONS) expect(request.systemPrompt).toContain(section);
	expectPromptOnlyGrows(root);
});

it("20 agent messages queued while the parent's cell runs reach it in one model call, in order", {
	timeout: 120_000,
}, async () => {
	const started = await sessions.start();
	const done = join(sessions.world.project, "flood-done");
	const seen = scriptAgents(sessions, {
		root: [
			cell(['h = await rlm("send twenty", name="flood")', waitFor(done)].join("\n")),
			fauxAssistantMessage("Read them all."),
		],
		flood: [
			cell(
				[
					...Array.from({ length: 20 }, (_, i) => `await agent_message.send("m${i}", receiver_role="parent")`),
					touch(done),
				].join("\n"),
			),
			fauxAssistantMessage("Sent."),
		],
	});
	expect((await started.agentSession.prompt("take twenty messages")).status).toBe("ok");
	await started.whenSettled();

	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(2);
	const texts = (root[1]?.messages ?? []).map((message) => wireText(message));
	const received = texts.flatMap((text) => /<agent_message id="msg_\d+">\n(m\d+)\n/.exec(text)?.[1] ?? []);
	expect(received).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
	expectPromptOnlyGrows(root);
});

it("a harness change is the one place the system prompt changes; prompts before and after it only grow", {
	timeout: 120_000,
}, async () => {
	const started = await sessions.start();
	const seen = scriptAgents(sessions, {
		root: [
			cell("x = 1"),
			fauxAssistantMessage("one"),
			cell('rlm.harness.create_memory("style", "prefer small modules")'),
			fauxAssistantMessage("remembered"),
			fauxAssistantMessage("three"),
		],
	});
	for (const prompt of ["first", "remember a style", "third"])
		expect((await started.agentSession.prompt(prompt)).status).toBe("ok");
	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(5);
	// The memory made in request 2's cell joins the index when the next run starts, not mid-run.
	expectPromptOnlyGrows(root, { system: [4] });
	expect(root[4]?.systemPrompt).toContain("prefer small modules");
	expect(root[3]?.systemPrompt).not.toContain("prefer small modules");
});

it("a resumed session's first turn, woken by a delivered message before any prompt, keeps the system prompt of the turns before", {
	timeout: 120_000,
}, async () => {
	configureMcp();
	const first = await sessions.start();
	const seen = scriptAgents(sessions, {
		root: [cell("x = 1"), fauxAssistantMessage("one"), fauxAssistantMessage("woken")],
	});
	expect((await first.agentSession.prompt("first")).status).toBe("ok");
	await first.dispose();

	const resumed = await sessions.start({ resume: first.session.path });
	const woken = new Promise((resolve) => resumed.agentSession.onWakeOutcome(resolve));
	resumed.agentSession.deliverExternal({ customType: "schedule", content: "[scheduled: check the build]" });
	expect(await woken).toMatchObject({ status: "ok" });

	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(3);
	expect(wireText(root[2]?.messages.at(-1) as never)).toBe("[scheduled: check the build]");
	for (const request of root) for (const section of SECTIONS) expect(request.systemPrompt).toContain(section);
	expectPromptOnlyGrows(root);
});

/** A real git repository: check.py passes once value.txt says "ok". */
function gitProject(): void {
	const world = sessions.world;
	world.writeProject(
		"check.py",
		"import sys\nvalue = open('value.txt').read().strip()\nprint(f'value is {value}')\nsys.exit(0 if value == 'ok' else 1)\n",
	);
	world.writeProject("value.txt", "bad\n");
	const git = (...args: string[]) => execFileSync("git", args, { cwd: world.project });
	git("init", "-q");
	git("-c", "user.email=t@t", "-c", "user.name=t", "add", ".");
	git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start");
}

it("a long autonomous goal run (a child and its notice, goal continuations, a harness change, a failing then passing gate, MCP and skills) only grows", {
	timeout: 180_000,
}, async () => {
	configureMcp();
	gitProject();
	const go = join(sessions.world.project, "go");
	const seen = scriptAgents(sessions, {
		root: [
			cell('h = await rlm("count to two", name="kid")'),
			fauxAssistantMessage("Waiting for the kid."),
			fauxAssistantMessage("The kid counted."),
			cell('rlm.harness.create_memory("style", "take small steps")'),
			fauxAssistantMessage("Remembered."),
			cell("print(1 + 1)"),
			fauxAssistantMessage("Still open."),
			cell('await goal.complete("the kid counted and the style is remembered")'),
			fauxAssistantMessage("Done."),
			cell("open('value.txt', 'w').write('ok\\n')"),
			fauxAssistantMessage("Fixed value.txt."),
		],
		kid: [cell(waitFor(go)), fauxAssistantMessage("1 2")],
	});
	const started = await sessions.start({
		goal: { objective: "get the kid's count and pass the check" },
		autonomous: { gates: ["python3 check.py"], maxContinuations: "6" },
	});
	expect((await started.agentSession.prompt("go")).status).toBe("ok");
	writeFileSync(go, "1");
	await started.whenSettled();

	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(11);
	expect(started.autonomous?.ending).toEqual({ status: "passed" });
	const last = (index: number) => wireText(root[index]?.messages.at(-1) as never);
	expect(last(2)).toContain("[rlm notice: completed_without_reply]");
	expect(last(9)).toContain("[autonomous gate 1 of 1 failed]");
	for (const request of root) for (const section of SECTIONS) expect(request.systemPrompt).toContain(section);
	// The memory made in request 3's cell waits for the next run: one system prompt for the whole run.
	expectPromptOnlyGrows(root);
	expect(root[10]?.systemPrompt).not.toContain("take small steps");
	// What a provider's cache can bill at its cached rate: all but the new messages (74% before
	// woken turns kept the system prompt and continuations stopped rewriting message 1).
	expect(cachedShare(root).share).toBeGreaterThan(0.9);
});

it("Prime Context's task snapshot stays last and byte-identical while the task is unchanged, and changes once with it", {
	timeout: 120_000,
}, async () => {
	const started = await sessions.start();
	const seen = scriptAgents(sessions, {
		root: [cell("a = 1"), cell("b = 2"), fauxAssistantMessage("two"), cell("c = 3"), fauxAssistantMessage("three")],
	});
	expect((await started.agentSession.prompt("/pc focus fix the parser")).status).toBe("ok");
	expect((await started.agentSession.prompt("first")).status).toBe("ok");
	expect((await started.agentSession.prompt("/pc focus fix the lexer")).status).toBe("ok");
	expect((await started.agentSession.prompt("second")).status).toBe("ok");

	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(5);
	const snapshots = root.map((request) => wireText(request.messages.at(-1) as never));
	expect(snapshots.slice(0, 3).every((text) => text === snapshots[0])).toBe(true);
	expect(snapshots[0]).toContain("fix the parser");
	expect(snapshots[3]).toContain("fix the lexer");
	const growth = expectPromptOnlyGrows(root);
	expect(growth.snapshotChanges).toEqual([3]);
});

it("a skill installed between two prompts changes the next run's system prompt once, and the session records that boundary", {
	timeout: 120_000,
}, async () => {
	const started = await sessions.start();
	const seen = scriptAgents(sessions, {
		root: [
			cell("a = 1"),
			fauxAssistantMessage("one"),
			cell("b = 2"),
			fauxAssistantMessage("two"),
			fauxAssistantMessage("three"),
		],
	});
	expect((await started.agentSession.prompt("first")).status).toBe("ok");
	// As `prime-agent skill install` in another terminal would leave it.
	const skill = join(sessions.world.home, "skills", "csv-stats");
	mkdirSync(skill, { recursive: true });
	writeFileSync(
		join(skill, "SKILL.md"),
		"---\nname: csv-stats\ndescription: Column statistics of a CSV file.\n---\n\nUse it.\n",
	);
	writeFileSync(join(skill, "__init__.py"), "X = 1\n");
	expect((await started.agentSession.prompt("second")).status).toBe("ok");
	expect((await started.agentSession.prompt("third")).status).toBe("ok");

	const root = requestsOf(seen, "root");
	expect(root).toHaveLength(5);
	expectPromptOnlyGrows(root, { system: [2] });
	expect(root[2]?.systemPrompt).toContain("- csv-stats: Column statistics of a CSV file.");
	const boundaries = started.session.customEntries(SYSTEM_PROMPT_ENTRY).map((entry) => entry.data);
	const prompt = started.agentSession.agent.state.systemPrompt;
	expect(boundaries).toEqual([{ sha256: createHash("sha256").update(prompt).digest("hex"), chars: prompt.length }]);
});
