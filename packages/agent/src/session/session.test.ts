import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { answerMessage } from "../../test/agent-scripts.js";
import { latestSession, listSessions, resolveSessionRef } from "./catalog.js";
import { compactionSummaryText } from "./context.js";
import { toLlmMessages } from "./messages.js";
import { Session } from "./session.js";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "prime-session-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: Date.now() });
const assistant = (text: string) => answerMessage(text);
const lines = (path: string) =>
	readFileSync(path, "utf8")
		.split("\n")
		.filter((line) => line !== "")
		.map((line) => JSON.parse(line));
const texts = (session: Session) =>
	session
		.context()
		.messages.map((message) =>
			typeof message.content === "string" ? message.content : (message.content[0] as { text: string }).text,
		);

describe("session file", () => {
	it("writes nothing until the first assistant message, then everything so far", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendModelChange("faux", "faux-1");
		session.appendMessage(user("hello"));
		expect(existsSync(session.path)).toBe(false);
		session.appendMessage(assistant("hi"));
		const records = lines(session.path);
		expect(records.map((record) => record.type)).toEqual(["session", "model_change", "message", "message"]);
		expect(records[0]).toMatchObject({ type: "session", id: session.id, cwd: "/project" });
		expect(statSync(session.path).mode & 0o777).toBe(0o600);
	});

	it("appends each later entry at once, each linked to the one before", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("one"));
		session.appendMessage(assistant("two"));
		session.appendMessage(user("three"));
		expect(lines(session.path)).toHaveLength(4);
		const [, first, second, third] = lines(session.path);
		expect(first.parentId).toBeNull();
		expect(second.parentId).toBe(first.id);
		expect(third.parentId).toBe(second.id);
	});

	it("a session opened and closed leaves no file", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("never answered"));
		expect(listSessions(dir)).toEqual([]);
	});

	it("an entry appended with keep writes the file at once, with every entry before it; keep() writes what there is", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendCustom("note", { n: 1 });
		expect(existsSync(session.path)).toBe(false);
		session.appendCustom("goal", { id: "goal-1" }, { keep: true });
		expect(session.persisted).toBe(true);
		expect(lines(session.path).map((record) => record.customType ?? record.type)).toEqual(["session", "note", "goal"]);
		session.appendCustom("note", { n: 2 });
		expect(lines(session.path)).toHaveLength(4);
		// Reopened, it is a session like any other: `-c` and `--resume` find it.
		expect(Session.open(session.path).entries).toHaveLength(3);
		expect(latestSession(dir, "/project")?.id).toBe(session.id);

		const bare = Session.create({ dir, cwd: "/elsewhere" });
		bare.keep();
		bare.keep();
		expect(lines(bare.path)).toEqual([bare.header]);
	});

	it("reopening restores the entries and continues from the last one", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("a"));
		session.appendMessage(assistant("b"));
		const reopened = Session.open(session.path);
		expect(texts(reopened)).toEqual(["a", "b"]);
		reopened.appendMessage(user("c"));
		expect(texts(Session.open(session.path))).toEqual(["a", "b", "c"]);
	});

	it("branching rebuilds the context from the active branch only", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("question"));
		const answer = session.appendMessage(assistant("first answer"));
		session.appendMessage(user("follow-up on the first branch"));
		session.appendMessage(assistant("reply on the first branch"));
		session.branchFrom(answer);
		session.appendMessage(user("another follow-up"));
		expect(texts(session)).toEqual(["question", "first answer", "another follow-up"]);
		// The abandoned branch stays in the file.
		expect(lines(session.path)).toHaveLength(6);
		expect(texts(Session.open(session.path))).toEqual(["question", "first answer", "another follow-up"]);
	});

	it("a fork holds only the path to the chosen entry and points back to its parent", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("question"));
		const answer = session.appendMessage(assistant("answer"));
		session.appendMessage(user("later"));
		session.appendMessage(assistant("later answer"));
		const fork = session.fork(answer);
		expect(fork.id).not.toBe(session.id);
		const records = lines(fork.path);
		expect(records[0].parentSession).toBe(session.path);
		expect(records).toHaveLength(3);
		expect(texts(Session.open(fork.path))).toEqual(["question", "answer"]);
		expect(texts(Session.open(session.path))).toEqual(["question", "answer", "later", "later answer"]);
	});

	it("custom entries follow the branch, newest first, and never reach the model", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("q"));
		const answer = session.appendMessage(assistant("a"));
		session.appendCustom("goal", { objective: "old" });
		session.appendCustom("goal", { objective: "new" });
		expect(session.customEntries("goal").map((entry) => entry.data)).toEqual([
			{ objective: "new" },
			{ objective: "old" },
		]);
		expect(toLlmMessages(session.context().messages).map((message) => message.role)).toEqual(["user", "assistant"]);
		session.branchFrom(answer);
		expect(session.customEntries("goal")).toEqual([]);
	});

	it("custom messages are sent to the model as user content", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("q"));
		session.appendMessage(assistant("a"));
		session.append({ type: "custom_message", customType: "note", content: "from the host", display: false });
		const sent = toLlmMessages(session.context().messages);
		expect(sent[2]).toMatchObject({ role: "user", content: "from the host" });
	});

	it("a compaction replaces what came before its first kept entry", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("old question"));
		session.appendMessage(assistant("old answer"));
		const kept = session.appendMessage(user("recent question"));
		session.appendMessage(assistant("recent answer"));
		session.append({ type: "compaction", summary: "SUMMARY", firstKeptEntryId: kept, tokensBefore: 100 });
		session.appendMessage(user("next"));
		expect(texts(session)).toEqual([compactionSummaryText("SUMMARY"), "recent question", "recent answer", "next"]);
	});

	it("a torn last line is dropped when reading; earlier damage is reported", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("q"));
		session.appendMessage(assistant("a"));
		writeFileSync(session.path, `${readFileSync(session.path, "utf8")}{"type":"mess`);
		expect(texts(Session.open(session.path))).toEqual(["q", "a"]);
		const text = readFileSync(session.path, "utf8").split("\n");
		text[1] = "not json";
		writeFileSync(session.path, text.join("\n"));
		expect(() => Session.open(session.path)).toThrow(/damaged at line 2/);
	});
});

describe("session catalogue", () => {
	it("lists sessions newest first and resolves ids, prefixes and paths", () => {
		const first = Session.create({ dir, cwd: "/a" });
		first.appendMessage(user("first task"));
		first.appendMessage(assistant("ok"));
		const second = Session.create({ dir, cwd: "/b" });
		second.appendMessage(user("second task"));
		second.appendMessage(assistant("ok"));
		const listed = listSessions(dir);
		expect(listed.map((info) => info.firstMessage).sort()).toEqual(["first task", "second task"]);
		expect(latestSession(dir, "/a")?.id).toBe(first.id);
		expect(resolveSessionRef(first.id.slice(0, 8), dir, "/")).toBe(first.path);
		expect(resolveSessionRef(second.path, dir, "/")).toBe(second.path);
		expect(() => resolveSessionRef("zzzz", dir, "/")).toThrow(/No session matches/);
	});
});

describe("lazy creation", () => {
	it("an assistant message that failed before any output does not create the file", () => {
		const session = Session.create({ dir, cwd: "/project" });
		session.appendMessage(user("hello"));
		session.appendMessage({ ...assistant(""), stopReason: "error", errorMessage: "connection refused" });
		expect(existsSync(session.path)).toBe(false);
		session.appendMessage({ ...assistant("partial"), stopReason: "aborted" });
		expect(lines(session.path)).toHaveLength(4);
	});
});

describe("damage found while reading", () => {
	const ID = "da3a6ed0-0000-4000-8000-000000000002";
	const at = "2026-01-01T00:00:00.000Z";
	const first = { type: "message", id: "aaaa0001", parentId: null, timestamp: at, message: user("q") };
	const base = { id: "aaaa0002", parentId: "aaaa0001", timestamp: at };
	const write = (records: unknown[], name = `${ID}.jsonl`) => {
		const path = join(dir, name);
		writeFileSync(path, `${records.map((record) => JSON.stringify(record)).join("\n")}\n`);
		return path;
	};
	const header = { type: "session", version: 1, id: ID, timestamp: at, cwd: "/project" };

	it.each([
		[{ ...base, type: "message", message: 42 }, "message must be an object"],
		[
			{ ...base, type: "message", message: { ...user("q"), content: 7 } },
			"message.content must be a string or an array",
		],
		[
			{
				...base,
				type: "message",
				message: { ...assistant("a"), content: [{ type: "toolCall", id: "c", name: "ipython", arguments: "x" }] },
			},
			"message.content.0.arguments must be an object",
		],
		[
			{
				...base,
				type: "message",
				message: { role: "toolResult", toolCallId: "c", toolName: "ipython", content: [], isError: "no", timestamp: 1 },
			},
			"message.isError must be a boolean",
		],
		[
			{ ...base, type: "message", message: { role: "robot", content: "" } },
			"message.role must be one of user, assistant, toolResult",
		],
		[{ ...base, type: "model_change", provider: 7, modelId: "m" }, "provider must be a string"],
		[
			{ ...base, type: "compaction", summary: "s", firstKeptEntryId: "aaaa0001", tokensBefore: "many" },
			"tokensBefore must be a number",
		],
		[
			{ ...base, type: "custom_message", customType: "note", content: "c", display: "yes" },
			"display must be a boolean",
		],
		[{ ...base, type: "mystery" }, 'unknown entry type "mystery"'],
		[[1, 2], "not a JSON object"],
		[{ ...base, id: 42, type: "custom", customType: "goal" }, "id must be a string"],
		[
			{ ...base, id: "aaaa0001", type: "custom", customType: "goal" },
			"the entry id aaaa0001 was used by an earlier line",
		],
		[{ ...header }, "a second session header"],
	])("line 3 is damage: %j", (record, reason) => {
		const path = write([header, first, record]);
		expect(() => Session.open(path)).toThrow(`Session file ${path} is damaged at line 3 (${reason}).`);
		const opened = Session.open(path, { upToDamage: true });
		expect([opened.damagedLine, opened.damage, opened.entries.length]).toEqual([3, reason, 1]);
		expect(listSessions(dir).map((info) => info.damagedLine)).toEqual([3]);
	});

	it("a header with a field of the wrong type: nothing can be read, and the listing leaves it out", () => {
		const path = write([{ ...header, cwd: 42 }, first]);
		expect(() => Session.open(path, { upToDamage: true })).toThrow(
			`Session file ${path} is damaged at line 1 (cwd must be a string): it has no header, so nothing in it can be resumed or forked.`,
		);
		expect(listSessions(dir)).toEqual([]);
	});

	it("hostile lines are damage at their line, never a crash: NUL bytes, nesting too deep to write back, __proto__ keys read as data", () => {
		const path = write([header, first]);
		writeFileSync(
			path,
			`${readFileSync(path, "utf8")}\0\0\0\0\n${JSON.stringify({ ...base, type: "custom", customType: "x" })}\n`,
		);
		expect(() => Session.open(path)).toThrow(
			`Session file ${path} is damaged at line 3. The entry after it (line 4) is not read.`,
		);

		// JSON.parse reads any depth; JSON.stringify (a fork, a request) overflows the stack on it.
		const deep = `{"type":"custom","customType":"x","id":"aaaa0002","parentId":"aaaa0001","timestamp":"${at}","data":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
		writeFileSync(path, `${JSON.stringify(header)}\n${JSON.stringify(first)}\n${deep}\n`);
		expect(() => Session.open(path)).toThrow(
			`Session file ${path} is damaged at line 3 (it nests arrays or objects more than 512 levels deep, which no entry does).`,
		);
		expect(Session.open(path, { upToDamage: true }).fork().entries.length).toBe(1);

		const polluting = `{"__proto__":{"polluted":true},"type":"custom","customType":"x","id":"aaaa0002","parentId":"aaaa0001","timestamp":"${at}"}`;
		writeFileSync(path, `${JSON.stringify(header)}\n${JSON.stringify(first)}\n${polluting}\n`);
		expect(Session.open(path).entries.length).toBe(2);
		expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
		// A folder where the file should be: the reason, not a crash.
		expect(() => Session.open(dir)).toThrow(
			`Session file ${dir} cannot be read (illegal operation on a directory, read).`,
		);
	});

	it("pi's version-1 compaction names its first kept entry by record index: it keeps that entry on", () => {
		const linear = (message: AgentMessage) => ({ type: "message", timestamp: at, message });
		const path = write([
			{ type: "session", id: ID, timestamp: at, cwd: "/project" },
			linear(user("old question")),
			linear(assistant("old answer")),
			linear(user("kept question")),
			linear(assistant("kept answer")),
			{ type: "compaction", timestamp: at, summary: "the old part", firstKeptEntryIndex: 3, tokensBefore: 50 },
			linear(user("new question")),
		]);
		const session = Session.open(path);
		expect(session.entry("line-6")).toMatchObject({ firstKeptEntryId: "line-4" });
		expect(texts(session)).toEqual([
			compactionSummaryText("the old part"),
			"kept question",
			"kept answer",
			"new question",
		]);
		expect(session.readNotes.length).toBe(1);
	});

	it("a header id that is not the file's name, or not an id at all, is refused; the listing leaves the file out", () => {
		const renamed = write([header, first], "renamed.jsonl");
		expect(() => Session.open(renamed)).toThrow(
			`Session file ${renamed} cannot be opened: its header names session ${ID}, not renamed.`,
		);
		const dots = write([{ ...header, id: ".." }, first], "...jsonl");
		expect(() => Session.open(dots)).toThrow(
			`Session file ${dots} cannot be opened: its header's id ".." is not a session id`,
		);
		expect(listSessions(dir)).toEqual([]);
	});
});
