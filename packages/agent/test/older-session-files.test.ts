import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { Session } from "../src/session/index.js";
import { recordingAnswer as answer, sentTexts } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";

/**
 * Session files written by older versions or edited by hand: a linear file (entries without
 * `id`/`parentId`) resumes with its whole conversation, a compaction that does not name its first
 * kept entry keeps its cells, and entries that cannot be read are named. Real files, a real kernel,
 * the faux model.
 */

const sessions = useFauxSessions();
const ID = "0a1d0000-0000-4000-8000-000000000037";
const at = "2026-01-01T00:00:00.000Z";
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: {} };

const user = (text: string) => ({ type: "message", message: { role: "user", content: text, timestamp: 1 } });
const says = (text: string) => ({
	type: "message",
	message: {
		role: "assistant",
		content: [{ type: "text", text }],
		api: "faux",
		provider: "faux",
		model: "faux-1",
		usage,
		stopReason: "stop",
		timestamp: 2,
	},
});
const runs = (code: string, callId: string) => ({
	type: "message",
	message: {
		...says("").message,
		content: [{ type: "toolCall", id: callId, name: "ipython", arguments: { code } }],
		stopReason: "toolUse",
	},
});
const result = (callId: string) => ({
	type: "message",
	message: {
		role: "toolResult",
		toolCallId: callId,
		toolName: "ipython",
		content: [{ type: "text", text: "(no output)" }],
		isError: false,
		timestamp: 3,
	},
});
/** `record` as a tree entry with its links. */
const linked = (record: object, id: string, parentId: string | null) => ({ ...record, id, parentId, timestamp: at });

/** Writes session `ID` into the home's sessions folder, one record a line; its path and bytes. */
function writeSession(records: unknown[]): { path: string; text: string } {
	const dir = join(sessions.world.home, "sessions");
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const path = join(dir, `${ID}.jsonl`);
	const text = `${records.map((record) => JSON.stringify(record)).join("\n")}\n`;
	writeFileSync(path, text);
	return { path, text };
}

it("a linear file (no id, no parentId, no version: pi's first format) resumes with its whole conversation, and is rewritten as a tree with its original kept", async () => {
	const seen: Context[] = [];
	sessions.faux.setResponses([answer("resumed", seen)]);
	// Seven entries in file order, as an older writer left them: lines 2-8.
	const { path, text } = writeSession([
		{ type: "session", id: ID, timestamp: at, cwd: sessions.world.project },
		{ type: "model_change", timestamp: at, provider: "faux", modelId: "faux-1" },
		{ ...user("load the data"), timestamp: at },
		{ ...runs("rows = [1, 2, 3]", "call-1"), timestamp: at },
		{ ...result("call-1"), timestamp: at },
		{ ...says("loaded 3 rows"), timestamp: at },
		{ ...user("and the mean?"), timestamp: at },
		{ ...says("the mean is 2"), timestamp: at },
	]);

	const resumed = await sessions.start({ resume: ID });
	expect(resumed.notices).toContain(
		`Session file ${path} has 7 entries written without entry links (an older, linear format; lines 2–8): each was placed after the entry on the line before it, as one conversation.`,
	);
	expect(resumed.notices).toContain(
		`When this session continues, its file is rewritten as a tree; the original is kept as ${path}.linear.`,
	);
	// Reading changed nothing yet.
	expect(readFileSync(path, "utf8")).toBe(text);
	expect(existsSync(`${path}.linear`)).toBe(false);

	expect((await resumed.agentSession.prompt("next")).status).toBe("ok");
	expect(seen.length).toBe(1);
	const sent = sentTexts(seen[0] as Context);
	expect(sent.length).toBe(8);
	expect(sent).toEqual([
		"user:load the data",
		"assistant:ipython",
		"toolResult:(no output)",
		"assistant:loaded 3 rows",
		"user:and the mean?",
		"assistant:the mean is 2",
		expect.stringContaining("user:[This session continues in a new IPython kernel"),
		"user:next",
	]);
	await resumed.dispose();

	// The original, byte for byte, beside the file; the file is now a tree that reads without notes,
	// the old entries under the ids they were given and the new ones hanging under them.
	expect(readFileSync(`${path}.linear`, "utf8")).toBe(text);
	const reopened = Session.open(path);
	expect(reopened.readNotes).toEqual([]);
	expect(reopened.linearBackup).toBeUndefined();
	const branch = reopened.branch();
	expect(branch.slice(0, 7).map((entry) => [entry.id, entry.parentId])).toEqual([
		["line-2", null],
		["line-3", "line-2"],
		["line-4", "line-3"],
		["line-5", "line-4"],
		["line-6", "line-5"],
		["line-7", "line-6"],
		["line-8", "line-7"],
	]);
	expect(branch[7]?.parentId).toBe("line-8");
	expect(reopened.context().messages.length).toBe(9);
	expect(readFileSync(path, "utf8").split("\n")[1]).toBe(
		JSON.stringify({
			type: "model_change",
			timestamp: at,
			provider: "faux",
			modelId: "faux-1",
			id: "line-2",
			parentId: null,
		}),
	);
}, 60_000);

it("a compaction that does not name its first kept entry keeps every cell the model saw before it, and says so", async () => {
	const seen: Context[] = [];
	sessions.faux.setResponses([answer("resumed", seen)]);
	const { path } = writeSession([
		{ type: "session", version: 1, id: ID, timestamp: at, cwd: sessions.world.project },
		linked(user("first question"), "aaaa0001", null),
		linked(says("first answer"), "aaaa0002", "aaaa0001"),
		linked(user("compute"), "aaaa0003", "aaaa0002"),
		linked(runs("x = 1", "call-1"), "aaaa0004", "aaaa0003"),
		linked(result("call-1"), "aaaa0005", "aaaa0004"),
		// Line 7: keeps aaaa0003 on.
		linked(
			{ type: "compaction", summary: "first summary", firstKeptEntryId: "aaaa0003", tokensBefore: 900 },
			"aaaa0006",
			"aaaa0005",
		),
		linked(user("more"), "aaaa0007", "aaaa0006"),
		linked(runs("y = 2", "call-2"), "aaaa0008", "aaaa0007"),
		linked(result("call-2"), "aaaa0009", "aaaa0008"),
		// Line 11: no firstKeptEntryId.
		linked({ type: "compaction", summary: "second summary", tokensBefore: 1200 }, "aaaa0010", "aaaa0009"),
		linked(user("after"), "aaaa0011", "aaaa0010"),
		linked(says("done"), "aaaa0012", "aaaa0011"),
	]);
	const note =
		"The compaction on line 11 does not name its first kept entry: the model sees its summary and all 7 entries before it from aaaa0003 on, as before that compaction; the next compaction shortens them again.";

	const resumed = await sessions.start({ resume: ID });
	expect(resumed.notices).toContain(note);
	expect((await resumed.agentSession.prompt("next")).status).toBe("ok");
	const sent = sentTexts(seen[0] as Context);
	expect(sent.length).toBe(12);
	expect(sent).toEqual([
		expect.stringContaining("second summary"),
		"user:compute",
		"assistant:ipython",
		"toolResult:(no output)",
		"user:more",
		"assistant:ipython",
		"toolResult:(no output)",
		"user:after",
		"assistant:done",
		expect.stringContaining("user:[This session continues in a new IPython kernel"),
		"user:next",
		// Prime Context's task keeps the root request the summary replaced.
		expect.stringContaining('user:<prime_context_task>\nROOT_REQUEST\n"first question"'),
	]);
	await resumed.dispose();

	// `sessions FILE` says it too; a first kept entry that is not on the branch is named.
	const shown = memoryIo(sessions.world.project, sessions.world.env);
	expect(await runCli(["sessions", ID], shown)).toBe(0);
	expect(shown.out()).toContain(`${note}\n`);
	const lines = readFileSync(path, "utf8").split("\n");
	lines[10] = lines[10]?.replace('"tokensBefore"', '"firstKeptEntryId":"gone0001","tokensBefore"') as string;
	writeFileSync(path, lines.join("\n"));
	expect(Session.open(path).readNotes).toEqual([
		note.replace(
			"does not name its first kept entry",
			'names "gone0001" as its first kept entry, which is not before it on its branch',
		),
	]);
}, 60_000);

it("entries after a line that cannot be placed are named: a resume refuses naming them, a fork leaves them out saying so", async () => {
	sessions.faux.setResponses([fauxAssistantMessage("forked")]);
	const { path } = writeSession([
		{ type: "session", version: 1, id: ID, timestamp: at, cwd: sessions.world.project },
		linked(user("first question"), "aaaa0001", null),
		linked(says("first answer"), "aaaa0002", "aaaa0001"),
		// Line 4 hangs under an entry no line holds: it and what follows cannot be placed.
		linked(user("lost"), "aaaa0003", "lost0001"),
		linked(says("after the lost one"), "aaaa0004", "aaaa0003"),
		linked(user("more"), "aaaa0005", "aaaa0004"),
		linked(says("last"), "aaaa0006", "aaaa0005"),
	]);
	const unread = "The 3 entries after it (lines 5–7) are not read";

	await expect(sessions.start({ resume: ID })).rejects.toThrow(
		`Session file ${path} is damaged at line 4 (the parent lost0001 of entry aaaa0003 is not on an earlier line). ${unread}.`,
	);
	const shown = memoryIo(sessions.world.project, sessions.world.env);
	expect(await runCli(["sessions", ID], shown)).toBe(0);
	expect(shown.out()).toContain(
		`The file is damaged at line 4 (the parent lost0001 of entry aaaa0003 is not on an earlier line). ${unread}: the entries above come before it.`,
	);

	const forked = await sessions.start({ fork: ID });
	expect(forked.notices).toContain(
		`Session ${ID} is damaged at line 4; the fork holds the entries before that line. ${unread}: repair line 4 of ${path} by hand to keep them.`,
	);
	expect((await forked.agentSession.prompt("go on")).status).toBe("ok");
	expect(forked.session.context().messages.map((message) => message.role)).toEqual([
		"user",
		"assistant",
		"user",
		"assistant",
	]);
}, 60_000);
