import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { Session } from "../src/session/index.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions();

/** A process appends `text` to `path` without its newline and is killed with SIGKILL mid-entry. */
async function killedMidWrite(path: string, text: string): Promise<void> {
	const script = `require("node:fs").appendFileSync(${JSON.stringify(path)}, ${JSON.stringify(text)}); process.stdout.write("written\\n"); setInterval(() => {}, 1000);`;
	const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
	await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
	const exited = new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
	child.kill("SIGKILL");
	expect(await exited).toBe("SIGKILL");
}

const roles = (path: string) =>
	readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line))
		.filter((record) => record.type === "message")
		.map((record) => `${record.message.role}:${JSON.stringify(record.message.content).slice(0, 40)}`);

it("a torn last line is set aside on resume: two more prompts append whole lines and nothing is lost", async () => {
	sessions.faux.setResponses(["one", "two", "three", "fork answer"].map((text) => fauxAssistantMessage(text)));
	const first = await sessions.start();
	await first.agentSession.prompt("first prompt");
	const path = first.session.path;
	const id = first.session.id;
	await first.dispose();
	const fragment = `{"type":"message","id":"deadbeef","parentId":"${first.session.leafId}","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"lost hal`;
	await killedMidWrite(path, fragment);

	const resumed = await sessions.start({ resume: id });
	expect((await resumed.agentSession.prompt("second prompt")).status).toBe("ok");
	expect((await resumed.agentSession.prompt("third prompt")).status).toBe("ok");
	await resumed.dispose();

	// Every line parses, the new prompts are there, and the fragment is kept beside the session.
	const text = readFileSync(path, "utf8");
	expect(text.endsWith("\n")).toBe(true);
	const messages = roles(path);
	expect(messages.length).toBe(6);
	expect(messages.filter((entry) => entry.startsWith("user:")).length).toBe(3);
	expect(text).toContain('"second prompt"');
	expect(text).toContain('"third prompt"');
	expect(readFileSync(`${path}.torn`, "utf8")).toBe(`${fragment}\n`);

	// The session reads back whole: resume, listing, and a fork at an entry.
	expect(Session.open(path).context().messages.length).toBe(6);
	const io = memoryIo(sessions.world.project, sessions.world.env);
	expect(await runCli(["sessions", id], io)).toBe(0);
	expect(io.out()).toContain("third prompt");
	const at = Session.open(path).branch()[1]?.id as string;
	const forked = await sessions.start({ fork: id, at });
	expect((await forked.agentSession.prompt("from the fork")).status).toBe("ok");
});

it("a line damaged in the middle is named by `sessions`, and a fork continues from the last good entry", async () => {
	sessions.faux.setResponses(["one", "two", "after fork"].map((text) => fauxAssistantMessage(text)));
	const first = await sessions.start();
	await first.agentSession.prompt("first prompt");
	await first.agentSession.prompt("second prompt");
	const path = first.session.path;
	const id = first.session.id;
	await first.dispose();
	// What an append onto a torn line used to leave: a fragment glued to the next entry.
	const lines = readFileSync(path, "utf8").split("\n");
	lines[4] = `{"type":"message","id":"x${lines[4]}`;
	writeFileSync(path, lines.join("\n"));

	const resume = memoryIo(sessions.world.project, sessions.world.env);
	await expect(sessions.start({ resume: id })).rejects.toThrow(`Session file ${path} is damaged at line 5.`);
	const list = memoryIo(sessions.world.project, sessions.world.env);
	expect(await runCli(["sessions"], list)).toBe(0);
	expect(list.out()).toContain(`${id}`);
	expect(list.out()).toContain("[damaged at line 5: fork it]");
	expect(await runCli(["sessions", id], resume)).toBe(0);
	expect(resume.out()).toContain("The file is damaged at line 5");

	const forked = await sessions.start({ fork: id });
	expect(forked.notices).toContain(
		`Session ${id} is damaged at line 5; the fork holds the entries before that line. The entry after it (line 6) is not read: repair line 5 of ${path} by hand to keep it.`,
	);
	expect((await forked.agentSession.prompt("go on")).status).toBe("ok");
	expect(forked.session.context().messages.map((message) => message.role)).toEqual([
		"user",
		"assistant",
		"user",
		"assistant",
	]);
	expect(existsSync(forked.session.path)).toBe(true);
});
