import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { listSessions, Session } from "../src/session/index.js";
import type { StartedSession, StartOptions } from "../src/startup/index.js";
import { recordingAnswer as answer, sentTexts } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions();
let world: TempWorld;

const start = (options: Partial<StartOptions> = {}): Promise<StartedSession> => sessions.start(options);

it("--resume and --continue pick the session up with its conversation, and say the kernel is new", async () => {
	world = sessions.newWorld();
	const seen: Context[] = [];
	sessions.faux.setResponses([
		fauxAssistantMessage(fauxToolCall("ipython", { code: "x = 5" })),
		answer("stored", seen),
		answer("x was 5", seen),
		answer("still here", seen),
	]);
	const first = await start();
	await first.agentSession.prompt("store x");
	await first.dispose();

	const resumed = await start({ resume: first.session.id.slice(0, 8) });
	expect(resumed.resumed).toBe(true);
	expect(resumed.session.path).toBe(first.session.path);
	await resumed.agentSession.prompt("what was x?");
	expect(sentTexts(seen[1] as Context)).toEqual([
		"user:store x",
		"assistant:ipython",
		"toolResult:(no output)",
		"assistant:stored",
		`user:[This session continues in a new IPython kernel. The state saved after cell 1 of this conversation (entry ${first.session.branch().find((entry) => entry.type === "message" && entry.message.role === "toolResult")?.id}), its last cell, is restored when it starts, before your first cell runs: x. The first cell's result says which names came back.]`,
		"user:what was x?",
	]);
	await resumed.dispose();

	const continued = await start({ continueLatest: true });
	expect(continued.session.id).toBe(first.session.id);
	await continued.agentSession.prompt("and now?");
	expect(sentTexts(seen[2] as Context).slice(-4)).toEqual([
		"user:what was x?",
		"assistant:x was 5",
		expect.stringContaining("user:[This session continues"),
		"user:and now?",
	]);
});

it("a fork restores only the branch up to the chosen entry, and a branch point is honoured on resume", async () => {
	world = sessions.newWorld();
	const seen: Context[] = [];
	sessions.faux.setResponses([
		answer("answer A", seen),
		answer("answer B", seen),
		answer("after fork", seen),
		answer("after branch", seen),
	]);
	const original = await start();
	await original.agentSession.prompt("question A");
	await original.agentSession.prompt("question B");
	await original.dispose();

	const session = Session.open(original.session.path);
	const answerA = session
		.branch()
		.find(
			(entry) =>
				entry.type === "message" &&
				entry.message.role === "assistant" &&
				JSON.stringify(entry.message).includes("answer A"),
		);
	const fork = session.fork(answerA?.id ?? null);
	const forked = await start({ resume: fork.path });
	await forked.agentSession.prompt("question C");
	expect(sentTexts(seen[2] as Context)).toEqual(["user:question A", "assistant:answer A", "user:question C"]);
	await forked.dispose();

	// Branch inside the original file: the new entry hangs under answer A; resuming follows it.
	session.branchFrom(answerA?.id ?? null);
	session.appendMessage({ role: "user", content: "question D", timestamp: Date.now() });
	const branched = await start({ resume: original.session.path });
	expect(branched.session.context().messages).toHaveLength(3);
	await branched.agentSession.prompt("question E");
	expect(sentTexts(seen[3] as Context)).toEqual([
		"user:question A",
		"assistant:answer A",
		"user:question D",
		"user:question E",
	]);
	// The original branch is still in the file.
	expect(Session.open(original.session.path).entries.some((entry) => JSON.stringify(entry).includes("answer B"))).toBe(
		true,
	);
});

it("--fork and --at continue from a chosen entry, and `sessions <id>` lists the entry ids", async () => {
	world = sessions.newWorld();
	const seen: Context[] = [];
	sessions.faux.setResponses([
		answer("answer A", seen),
		answer("answer B", seen),
		answer("forked", seen),
		answer("rewound", seen),
	]);
	const original = await start();
	await original.agentSession.prompt("question A");
	await original.agentSession.prompt("question B");
	await original.dispose();
	const answerA = original.session
		.branch()
		.find((entry) => entry.type === "message" && JSON.stringify(entry.message).includes("answer A"));
	if (!answerA) throw new Error("answer A was not recorded");

	const io = memoryIo(world.project, world.env);
	expect(await runCli(["sessions", original.session.id.slice(0, 6)], io)).toBe(0);
	expect(io.out()).toContain(`${answerA.id}  assistant  answer A`);

	const forked = await start({ fork: original.session.id, at: answerA.id });
	expect(forked.session.id).not.toBe(original.session.id);
	expect(forked.notices[0]).toContain("Forked session");
	await forked.agentSession.prompt("question C");
	expect(sentTexts(seen[2] as Context)).toEqual(["user:question A", "assistant:answer A", "user:question C"]);
	await forked.dispose();

	const rewound = await start({ resume: original.session.path, at: answerA.id });
	await rewound.agentSession.prompt("question D");
	expect(sentTexts(seen[3] as Context)).toEqual(["user:question A", "assistant:answer A", "user:question D"]);
	// Both branches stay in the original file.
	const reopened = Session.open(original.session.path);
	expect(reopened.entries.filter((entry) => entry.type === "message")).toHaveLength(6);
	expect(reopened.branch().at(-1)).toMatchObject({ type: "message", message: { role: "assistant" } });
});

it("resuming a session and leaving without a prompt leaves its file unchanged", async () => {
	world = sessions.newWorld();
	sessions.faux.setResponses([
		fauxAssistantMessage(fauxToolCall("ipython", { code: "1" })),
		fauxAssistantMessage("done"),
	]);
	const first = await start();
	await first.agentSession.prompt("go");
	await first.dispose();
	const before = readFileSync(first.session.path, "utf8");
	const resumed = await start({ resume: first.session.id, thinkingLevel: "high" });
	await resumed.dispose();
	expect(readFileSync(first.session.path, "utf8")).toBe(before);
});

it("a resumed session keeps its model without --model, and a bad --at changes nothing", async () => {
	world = sessions.newWorld();
	sessions.faux.setResponses([fauxAssistantMessage("hi")]);
	const first = await start();
	await first.agentSession.prompt("hello");
	await first.dispose();

	const resumed = await start({ resume: first.session.id, model: undefined });
	expect(`${resumed.model.provider}/${resumed.model.id}`).toBe("faux/faux-1");
	await resumed.dispose();

	const before = readFileSync(first.session.path, "utf8");
	await expect(start({ fork: first.session.id, at: "nope" })).rejects.toThrow(/No entry nope/);
	await expect(start({ resume: first.session.id, at: "nope" })).rejects.toThrow(/No entry nope/);
	expect(readFileSync(first.session.path, "utf8")).toBe(before);
	expect(listSessions(`${world.home}/sessions`)).toHaveLength(1);
});

it("resuming a session whose directory is gone works here and says so", async () => {
	world = sessions.newWorld();
	sessions.faux.setResponses([fauxAssistantMessage("hello"), fauxAssistantMessage("again")]);
	const gone = join(world.project, "gone");
	mkdirSync(gone);
	const first = await start({ cwd: gone });
	await first.agentSession.prompt("hi");
	await first.dispose();
	rmSync(gone, { recursive: true });
	const resumed = await start({ resume: first.session.id });
	expect(resumed.notices).toContain(
		`The session's directory ${gone} no longer exists: working in ${world.project} instead. Files the conversation names there are not here; restore the directory and resume again to work in it.`,
	);
	await resumed.dispose();
});
