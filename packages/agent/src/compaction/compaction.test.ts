import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../session/index.js";
import { compactionBudget, DEFAULT_COMPACTION_SETTINGS, prepareCompaction } from "./compact.js";
import { findCutPoint } from "./cut-point.js";
import { collectFileActivity } from "./file-tracking.js";
import { IPYTHON_STATE_TYPE, ipythonStateMessage } from "./kernel-state.js";

let counter = 0;
function entry(message: AgentMessage): SessionEntry {
	counter++;
	return { type: "message", id: `e${counter}`, parentId: null, timestamp: new Date(0).toISOString(), message };
}
/** A message of `tokens` estimated tokens (4 characters each). */
const user = (tokens: number) => entry({ role: "user", content: "u".repeat(tokens * 4), timestamp: 0 });
const assistantCall = (tokens: number, id: string) =>
	entry({
		role: "assistant",
		content: [{ type: "toolCall", id, name: "ipython", arguments: { code: "c".repeat(Math.max(0, tokens * 4 - 32)) } }],
		api: "faux",
		provider: "faux",
		model: "m",
		usage: {
			input: 0,
			output: 0,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 0,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		},
		stopReason: "toolUse",
		timestamp: 0,
	});
const toolResult = (tokens: number, id: string) =>
	entry({
		role: "toolResult",
		toolCallId: id,
		toolName: "ipython",
		content: [{ type: "text", text: "r".repeat(tokens * 4) }],
		isError: false,
		timestamp: 0,
	});

describe("findCutPoint", () => {
	it("keeps the newest entries whose sum first meets the threshold, cutting at a user message", () => {
		const entries = [user(100), user(100), user(100), user(100)];
		expect(findCutPoint(entries, 0, 4, 200)).toEqual({ firstKeptIndex: 2, turnStartIndex: -1 });
		// 199 is not met by one entry of 100, so two are kept; 201 needs three.
		expect(findCutPoint(entries, 0, 4, 199).firstKeptIndex).toBe(2);
		expect(findCutPoint(entries, 0, 4, 201).firstKeptIndex).toBe(1);
	});

	it("keeps everything when the whole branch is under the threshold", () => {
		const entries = [user(10), user(10)];
		expect(findCutPoint(entries, 0, 2, 1000)).toEqual({ firstKeptIndex: 0, turnStartIndex: -1 });
	});

	it("never cuts at a tool result: it moves to the next valid point and marks the split turn", () => {
		const entries = [
			user(10),
			assistantCall(10, "a"),
			toolResult(300, "a"),
			assistantCall(10, "b"),
			toolResult(10, "b"),
		];
		// The threshold is met at the large tool result (index 2); the next valid point is the assistant at 3.
		const cut = findCutPoint(entries, 0, entries.length, 100);
		expect(cut.firstKeptIndex).toBe(3);
		expect(cut.turnStartIndex).toBe(0);
		const kept = entries.slice(cut.firstKeptIndex);
		expect(kept[0]?.type === "message" && kept[0].message.role).toBe("assistant");
	});

	it("does not take the <ipython_state> note a compaction appended for the start of a turn", () => {
		const note: SessionEntry = {
			type: "custom_message",
			id: "note",
			parentId: null,
			timestamp: new Date(0).toISOString(),
			customType: IPYTHON_STATE_TYPE,
			content: "<ipython_state>\n</ipython_state>",
			display: false,
		};
		// Mid-run: the note sits between two cells of the turn that was running when it was appended.
		const entries = [assistantCall(10, "a"), toolResult(10, "a"), note, assistantCall(10, "b"), toolResult(500, "b")];
		expect(findCutPoint(entries, 0, 5, 400)).toEqual({ firstKeptIndex: 3, turnStartIndex: -1 });
	});

	it("keeps a single entry larger than the threshold whole", () => {
		const entries = [user(10), assistantCall(10, "a"), toolResult(10, "a"), user(5000)];
		expect(findCutPoint(entries, 0, entries.length, 100).firstKeptIndex).toBe(3);
		// When only tool results follow the point where the threshold is met, the cut moves back
		// to the call before them, so the result is kept together with its call.
		const tail = [user(10), assistantCall(10, "a"), toolResult(5000, "a")];
		expect(findCutPoint(tail, 0, tail.length, 100)).toEqual({ firstKeptIndex: 1, turnStartIndex: 0 });
	});

	it("starts no earlier than the boundary", () => {
		const entries = [user(100), user(100), user(100)];
		expect(findCutPoint(entries, 1, 3, 10_000).firstKeptIndex).toBe(1);
	});
});

describe("file activity", () => {
	it("tracks files from edit diffs and open()/Path() calls, carrying earlier lists forward", () => {
		const withCode = (code: string, id: string): AgentMessage => {
			const message = (assistantCall(1, id) as { message: Extract<AgentMessage, { role: "assistant" }> }).message;
			return { ...message, content: [{ type: "toolCall", id, name: "ipython", arguments: { code } }] };
		};
		const result = {
			role: "toolResult" as const,
			toolCallId: "x",
			toolName: "ipython",
			content: [],
			isError: false,
			timestamp: 0,
			details: { diffs: [{ path: "/p/src/calc.py" }] },
		};
		const activity = collectFileActivity(
			[
				withCode('src = open("README.md").read()\nopen("out.txt", "w").write(src)', "a"),
				withCode("from pathlib import Path\nPath('notes.md').write_text('x')\nPath(\"cfg.toml\").read_text()", "b"),
				result,
			],
			{ readFiles: ["old.py"], modifiedFiles: ["README.md"] },
		);
		expect(activity).toEqual({
			readFiles: ["cfg.toml", "old.py"],
			modifiedFiles: ["/p/src/calc.py", "README.md", "notes.md", "out.txt"],
		});
	});
});

describe("prepareCompaction", () => {
	const settings = { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 100 };
	const WINDOW = 200_000;
	const roles = (messages: AgentMessage[]) => messages.map((message) => message.role);

	it("summarises a split turn's beginning apart from the turns before it", () => {
		const branch = [
			user(50),
			assistantCall(10, "a"),
			toolResult(10, "a"),
			user(10),
			assistantCall(10, "b"),
			toolResult(300, "b"),
			assistantCall(10, "c"),
			toolResult(10, "c"),
		];
		const prepared = prepareCompaction(branch, settings, WINDOW);
		expect(prepared?.firstKeptIndex).toBe(6);
		expect(roles(prepared?.preparation.messagesToSummarize ?? [])).toEqual(["user", "assistant", "toolResult"]);
		expect(roles(prepared?.preparation.turnPrefixMessages ?? [])).toEqual(["user", "assistant", "toolResult"]);
	});

	it("starts from the previous compaction's kept entries and carries its summary and files", () => {
		const branch: SessionEntry[] = [user(200), user(200), user(200)];
		const kept = branch[1] as SessionEntry;
		branch.push({
			type: "compaction",
			id: "c1",
			parentId: null,
			timestamp: new Date(0).toISOString(),
			summary: "OLD SUMMARY",
			firstKeptEntryId: kept.id,
			tokensBefore: 1,
			details: { readFiles: ["a.txt"], modifiedFiles: [] },
		});
		branch.push(user(200), user(200));
		const prepared = prepareCompaction(branch, settings, WINDOW);
		expect(prepared?.preparation.previousSummary).toBe("OLD SUMMARY");
		expect(prepared?.preparation.readFiles).toEqual(["a.txt"]);
		// Summarised: the two kept entries of the last compaction and the next one; the newest stays.
		expect(prepared?.preparation.messagesToSummarize).toHaveLength(3);
		expect(prepared?.firstKeptIndex).toBe(5);
	});

	it("has nothing to do when the recent part is all there is", () => {
		expect(prepareCompaction([user(10), user(10)], settings, WINDOW)).toBeUndefined();
	});
});

describe("compactionBudget", () => {
	it("keeps the default 20,000 tokens on a large window", () => {
		expect(compactionBudget(DEFAULT_COMPACTION_SETTINGS, 200_000)).toEqual({
			threshold: 200_000 - 16_384,
			keepRecentTokens: 20_000,
		});
	});

	it("keeps at most half of the room under the trigger on a small window, so a compacted context settles", () => {
		expect(compactionBudget(DEFAULT_COMPACTION_SETTINGS, 32_768)).toEqual({
			threshold: 16_384,
			keepRecentTokens: 8192,
		});
		// A window smaller than twice the reserve leaves half of it to the answer.
		expect(compactionBudget(DEFAULT_COMPACTION_SETTINGS, 8192)).toEqual({ threshold: 4096, keepRecentTokens: 2048 });
	});
});

describe("<ipython_state>", () => {
	it("says the kernel persisted, lists the names, and counts what a long list leaves out", () => {
		const text = ipythonStateMessage({ names: [{ name: "data", type: "dict" }], total: 1201 });
		expect(text).toContain("the IPython kernel persisted");
		expect(text).toContain("do not redefine");
		expect(text).toContain("data (dict), and 1,200 more (`dir()` lists them all)");
		expect(ipythonStateMessage({ names: [] })).toContain("No names of yours");
		expect(ipythonStateMessage({})).toContain("could not be listed");
		const restarted = ipythonStateMessage({ names: [], notice: "[Kernel restarted: it died.]" });
		expect(restarted).toContain("[Kernel restarted: it died.]");
		expect(restarted).not.toContain("persisted");
	});
});
