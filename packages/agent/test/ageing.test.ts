import { type Context, fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import { AGEING_ENTRY_TYPE, type AgeingRecord } from "../src/builtin/prime-context/ageing.js";
import { cell, scriptAgents } from "./agent-scripts.js";
import { expectPromptOnlyGrows } from "./prompt-growth.js";

/** Anthropic's prices per million tokens (cache read 0.1x, write 1.25x). */
const CACHED = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const sessions = useFauxSessions({
	models: [
		{ id: "plain" },
		{ id: "cached", cost: CACHED },
		{ id: "cached-2", cost: CACHED },
		// Writing the cache costs 1,000 reads here: re-billing never pays within a short run.
		{ id: "small", cost: { input: 1, output: 1, cacheRead: 0.01, cacheWrite: 10 }, contextWindow: 28_000 },
	],
});

/** Cell `i` prints 6,001 characters of its own (about 1,500 tokens): too small for a capsule, large for a stub. */
const output = (i: number) => `${i}:${"abcdefghij".repeat(600)}`;
const print = (i: number) => `print("${i}:" + "abcdefghij" * 600)`;
/** The model runs `cells` (one per call), then answers "done". */
const cells = (codes: string[]) => [...codes.map((code) => cell(code)), fauxAssistantMessage("done")];
const results = (context: Context | undefined) =>
	(context?.messages ?? []).filter((message) => message.role === "toolResult").map(wireText);
const records = (started: { session: { branch(): readonly { type: string }[] } }) =>
	started.session
		.branch()
		.flatMap((entry) =>
			entry.type === "custom" && (entry as { customType?: string }).customType === AGEING_ENTRY_TYPE
				? [(entry as unknown as { data: AgeingRecord }).data]
				: [],
		);
const stub = (id: string, i: number) =>
	`[aged] ${id} · ipython · ${print(i)} · 6,002 bytes, 1 lines · prime_context action=read id=${id}`;

describe("Prime Context ageing in the agent", () => {
	it("on a model with no cache prices, each observation past the window of 3 is sent as its stub; every ageing is an entry; the stub's id reads the output back exactly", async () => {
		const started = await sessions.start({ model: sessions.modelRef("plain") });
		const codes = [1, 2, 3, 4, 5, 6, 7].map(print);
		codes.push('print(await prime_context.text("obs_000001") == "1:" + "abcdefghij" * 600)');
		const seen = scriptAgents(sessions, { root: cells(codes) });
		expect((await started.agentSession.prompt("run them")).status).toBe("ok");
		const root = seen.get("root") as Context[];
		expect(root).toHaveLength(9);
		// Request k sees k results: from request 4 on, the oldest beyond the newest three goes, one per call.
		expectPromptOnlyGrows(root, { aged: [4, 5, 6, 7, 8] });
		const last = results(root[8]);
		expect(last.slice(0, 5)).toEqual([1, 2, 3, 4, 5].map((i) => stub(`obs_00000${i}`, i)));
		expect(last.slice(5)).toEqual([6, 7].map(output).concat(["True"]));
		expect(records(started).map((record) => [record.reason, record.aged.map((aged) => aged.id)])).toEqual([
			["uncached", ["obs_000001"]],
			["uncached", ["obs_000002"]],
			["uncached", ["obs_000003"]],
			["uncached", ["obs_000004"]],
			["uncached", ["obs_000005"]],
		]);
		// The transcript keeps every result whole.
		const kept = started.session
			.branch()
			.flatMap((entry) =>
				entry.type === "message" && entry.message.role === "toolResult" ? [wireText(entry.message)] : [],
			);
		expect(kept[0]).toBe(output(1));
		const status = await started.agentSession.prompt("/pc status");
		const saved = 5 * (1501 - Math.ceil(stub("obs_000001", 1).length / 4));
		expect(status.command?.message?.split("\n").find((line) => line.startsWith("ageing:"))).toBe(
			`ageing: on (the newest 3 observations are never aged); 5 observations aged, about ${saved.toLocaleString("en-US")} tokens out of every call (last because the model has no cache prices); each stub names its id for read/search`,
		);
	});

	it("a resumed session sends the aged prompt of before byte for byte, and goes on from there", async () => {
		const first = await sessions.start({ model: sessions.modelRef("plain") });
		const seen = scriptAgents(sessions, {
			root: [...cells([1, 2, 3, 4, 5, 6, 7].map(print)), fauxAssistantMessage("again")],
		});
		expect((await first.agentSession.prompt("run them")).status).toBe("ok");
		await first.dispose();
		const resumed = await sessions.start({ resume: first.session.path });
		expect((await resumed.agentSession.prompt("once more")).status).toBe("ok");
		const root = seen.get("root") as Context[];
		expect(root).toHaveLength(9);
		expectPromptOnlyGrows(root, { aged: [4, 5, 6, 7] });
		expect(results(root[8]).slice(0, 5)).toEqual([1, 2, 3, 4].map((i) => stub(`obs_00000${i}`, i)).concat([output(5)]));
	});

	it("a fork at an entry sends the prompt of that point, aged as it was then, and its stubs read back through the parent", async () => {
		const first = await sessions.start({ model: sessions.modelRef("plain") });
		const codes = [1, 2, 3, 4, 5, 6].map(print);
		const seen = scriptAgents(sessions, {
			root: [
				...cells(codes),
				cell('print(await prime_context.text("obs_000001") == "1:" + "abcdefghij" * 600)'),
				fauxAssistantMessage("forked"),
			],
		});
		expect((await first.agentSession.prompt("run them")).status).toBe("ok");
		// The fork branches at the last answer of the parent's run: obs 1 to 3 were aged by then.
		const answer = first.session
			.branch()
			.filter((entry) => entry.type === "message" && entry.message.role === "assistant")
			.at(-1);
		await first.dispose();
		const forked = await sessions.start({ fork: first.session.path, at: answer?.id });
		expect((await forked.agentSession.prompt("check the first")).status).toBe("ok");
		const root = seen.get("root") as Context[];
		expect(root).toHaveLength(9);
		// The fork's first request (7) extends the parent's last (6) byte for byte; at 8 the read's
		// result pushes the fourth out of the window.
		expectPromptOnlyGrows(root, { aged: [4, 5, 6, 8] });
		expect(results(root[8]).slice(0, 4)).toEqual([1, 2, 3, 4].map((i) => stub(`obs_00000${i}`, i)));
		expect(results(root[8]).at(-1)).toBe("True");
		// The fork's own outputs are numbered after its parent's: an id of the parent's history names one output.
		const own = forked.session
			.branch()
			.flatMap((entry) =>
				entry.type === "message" && entry.message.role === "toolResult"
					? [(entry.message.details as { primeContext?: { id: string } } | undefined)?.primeContext?.id]
					: [],
			);
		expect(own).toEqual([
			"obs_000001",
			"obs_000002",
			"obs_000003",
			"obs_000004",
			"obs_000005",
			"obs_000006",
			"obs_000007",
		]);
	});

	it("on a cached model ageing waits until it pays; a model change leaves the cache cold and ages what is due at no re-billing", async () => {
		const started = await sessions.start({ model: sessions.modelRef("cached") });
		const seen = scriptAgents(sessions, {
			root: [...cells([1, 2, 3, 4, 5].map(print)), fauxAssistantMessage("switched")],
		});
		expect((await started.agentSession.prompt("run them")).status).toBe("ok");
		// Five calls in, removing two observations does not pay for re-billing the three after them.
		expect(records(started)).toEqual([]);
		await started.dispose();
		const switched = await sessions.start({ resume: started.session.path, model: sessions.modelRef("cached-2") });
		expect((await switched.agentSession.prompt("go on")).status).toBe("ok");
		const root = seen.get("root") as Context[];
		expect(root).toHaveLength(7);
		expectPromptOnlyGrows(root, { aged: [6] });
		const stubTokens = Math.ceil(stub("obs_000001", 1).length / 4);
		expect(records(switched)).toEqual([
			{
				aged: [1, 2].map((i) => ({ toolCallId: expect.any(String), id: `obs_00000${i}` })),
				reason: "cold-cache",
				removedTokens: 2 * (1501 - stubTokens),
				rebilledTokens: 0,
			},
		]);

		// Seven calls in, four observations go at once: 5,876 tokens saved on this and the 7 calls
		// expected (0.1 each) outweigh re-billing the 3,215 cached after them (1.25 - 0.1).
		sessions.newWorld();
		const longer = await sessions.start({ model: sessions.modelRef("cached") });
		const more = scriptAgents(sessions, { root: cells([1, 2, 3, 4, 5, 6, 7].map(print)) });
		expect((await longer.agentSession.prompt("run them")).status).toBe("ok");
		expectPromptOnlyGrows(more.get("root") as Context[], { aged: [7] });
		expect(records(longer)).toEqual([
			{
				aged: [1, 2, 3, 4].map((i) => ({ toolCallId: expect.any(String), id: `obs_00000${i}` })),
				reason: "pays",
				removedTokens: 4 * (1501 - stubTokens),
				rebilledTokens: 3215,
			},
		]);
	});

	it("never ages the newest result of a test command, and none with ageing turned off", async () => {
		const pytest = `print("tests/test_a.py " + "." * 3000 + "\\n===== 3000 passed in 1.20s =====")`;
		sessions.world.writeHome("prime-context.json", { ageingWindow: 1 });
		const started = await sessions.start({ model: sessions.modelRef("plain") });
		const seen = scriptAgents(sessions, { root: cells([pytest, print(2), print(3)]) });
		expect((await started.agentSession.prompt("test")).status).toBe("ok");
		const root = seen.get("root") as Context[];
		// Window 1: the pytest result stays (the newest of its command); the first print goes.
		expectPromptOnlyGrows(root, { aged: [3] });
		const last = results(root[3]);
		expect(last[0]).toContain("===== 3000 passed in 1.20s =====");
		expect(last[1]).toBe(stub("obs_000002", 2));

		sessions.newWorld();
		sessions.world.writeHome("prime-context.json", { ageing: false });
		const off = await sessions.start({ model: sessions.modelRef("plain") });
		const offSeen = scriptAgents(sessions, { root: cells([1, 2, 3, 4, 5, 6, 7].map(print)) });
		expect((await off.agentSession.prompt("run them")).status).toBe("ok");
		expectPromptOnlyGrows(offSeen.get("root") as Context[]);
		expect(records(off)).toEqual([]);
		expect((await off.agentSession.prompt("/pc status")).command?.message).toContain(
			"ageing: off (prime-context.json `ageing`)",
		);
	});

	it("ages before compacting: a context over the threshold that ageing brings under it is not compacted", async () => {
		sessions.world.writeHome("prime-context.json", { ageingWindow: 2 });
		const started = await sessions.start({ model: sessions.modelRef("small") });
		let summaries = 0;
		const seen = scriptAgents(sessions, { root: cells([1, 2, 3, 4, 5, 6, 7, 8].map(print)) }, (context) => {
			if (!/^<conversation\b/.test(wireText(context.messages[0] as never))) return undefined;
			summaries++;
			return fauxAssistantMessage("summary");
		});
		expect((await started.agentSession.prompt("run them")).status).toBe("ok");
		expect(summaries).toBe(0);
		expect(started.session.branch().filter((entry) => entry.type === "compaction")).toHaveLength(0);
		// The threshold (28,000 - 14,000) is crossed with seven results: the five older ones go at once.
		expect(records(started).map((record) => [record.reason, record.aged.map((aged) => aged.id)])).toEqual([
			["window-full", ["obs_000001", "obs_000002", "obs_000003", "obs_000004", "obs_000005"]],
		]);
		const root = seen.get("root") as Context[];
		expect(root).toHaveLength(9);
		expectPromptOnlyGrows(root, { aged: [7] });
		expect(results(root[8]).slice(0, 6)).toEqual(
			[1, 2, 3, 4, 5].map((i) => stub(`obs_00000${i}`, i)).concat([output(6)]),
		);
	});
});
