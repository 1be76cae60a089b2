import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { openSessionArchive } from "prime-agent-context";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { describe, expect, it } from "vitest";
import type { StartedSession } from "../src/startup/index.js";

/** A real failing pytest run (134 KB, two failing tests) from the fixture outputs. */
const FIXTURE = new URL("../../../fixtures/outputs/006-attrs-validator-flip-verbose/", import.meta.url);
const LOG = readFileSync(new URL("output.txt", FIXTURE));
const FAILING_IDS = (JSON.parse(readFileSync(new URL("meta.json", FIXTURE), "utf8")) as { failing_ids: string[] })
	.failing_ids;
const PRINT_LOG = "print(open('pytest.log').read(), end='')";

const sessions = useFauxSessions();

function newWorld(settings?: unknown): void {
	const world = sessions.newWorld();
	if (settings) world.writeHome("settings.json", settings);
	world.writeProject("pytest.log", LOG.toString("utf8"));
}

const start = (options: { fork?: string } = {}): Promise<StartedSession> => sessions.start(options);

function textOf(message: unknown): string {
	const content = (message as { content: unknown }).content;
	if (typeof content === "string") return content;
	return (content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");
}

function toolResults(context: Context): string[] {
	return context.messages.filter((message) => message.role === "toolResult").map(textOf);
}

function taskMessages(context: Context): string[] {
	return context.messages
		.filter((message) => message.role === "user")
		.map(textOf)
		.filter((text) => text.startsWith("<prime_context_task>"));
}

function archiveOf(session: StartedSession) {
	return openSessionArchive({ root: join(sessions.world.home, "prime-context"), sessionId: session.session.id });
}

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

describe("Prime Context in the agent", () => {
	it("archives a 134 KB failing pytest log, shows a capsule, and recovers it with the tool and the kernel module", async () => {
		newWorld();
		const sent: Context[] = [];
		let id = "";
		const record = (context: Context) => sent.push(JSON.parse(JSON.stringify(context)));
		sessions.faux.setResponses([
			(context) => {
				record(context);
				return fauxAssistantMessage([fauxToolCall("ipython", { code: PRINT_LOG }, { id: "run-1" })]);
			},
			(context) => {
				record(context);
				id = /id="(obs_\d+)"/.exec(toolResults(context)[0] ?? "")?.[1] ?? "";
				return fauxAssistantMessage([
					fauxToolCall("prime_context", { action: "read", id, startLine: 3, endLine: 7 }, { id: "read-1" }),
					fauxToolCall("prime_context", { action: "update", focus: "Fix TestMaxLen" }, { id: "focus-1" }),
				]);
			},
			(context) => {
				record(context);
				const code = `import hashlib\nlog = await prime_context.text(${JSON.stringify(id)})\nprint(len(log.encode()), hashlib.sha256(log.encode()).hexdigest())\nprint(await prime_context.search("TestMaxLen", id=${JSON.stringify(id)}, max_matches=1, context_lines=0))`;
				return fauxAssistantMessage([fauxToolCall("ipython", { code }, { id: "text-1" })]);
			},
			(context) => {
				record(context);
				return fauxAssistantMessage([fauxToolCall("ipython", { code: PRINT_LOG }, { id: "run-2" })]);
			},
			(context) => {
				record(context);
				return fauxAssistantMessage("done");
			},
		]);
		const session = await start();
		const outcome = await session.agentSession.prompt("run the tests and find what fails");
		expect(outcome.status).toBe("ok");

		// The model saw a capsule naming every failing test, labelled as the complete output.
		const capsule = toolResults(sent[1] as Context)[0] as string;
		expect(capsule).toMatch(/^<prime_context_output id="obs_\d+" tool="ipython"/);
		expect(capsule).toContain('source="public-complete-output"');
		for (const failing of FAILING_IDS) expect(capsule).toContain(failing);
		expect(Buffer.byteLength(capsule)).toBeLessThanOrEqual(6144);

		// The transcript stores the same capsule; the archive holds every byte of the log.
		const stored = session.session
			.branch()
			.flatMap((entry) => (entry.type === "message" && entry.message.role === "toolResult" ? [entry.message] : []));
		expect(textOf(stored[0])).toBe(capsule);
		const archive = await archiveOf(session);
		expect(sha256(await archive.readBytes(id))).toBe(sha256(LOG));

		// The tool returned the exact lines asked for; the kernel module the whole text.
		const [read] = toolResults(sent[2] as Context).slice(1);
		const lines = LOG.toString("utf8").split("\n");
		for (const line of lines.slice(2, 7).filter((text) => text.trim() !== "")) expect(read).toContain(line);
		expect(read).not.toContain(lines[7] as string);
		const [digest, ...searched] = (toolResults(sent[3] as Context).at(-1) as string).split("\n");
		expect(digest).toBe(`${LOG.length} ${sha256(LOG)}`);
		expect(searched.join("\n")).toMatch(/\d+: .*TestMaxLen/);

		// The same run again is a delta of the first.
		const newest = (await archive.list(1))[0];
		expect(newest?.decision).toBe("delta-capsule");
		expect(toolResults(sent[4] as Context).at(-1)?.length).toBeLessThan(capsule.length);

		// No task message until there is something to add; then byte-identical while nothing changes.
		expect(taskMessages(sent[0] as Context)).toEqual([]);
		expect(taskMessages(sent[1] as Context)).toEqual([]);
		const last = (context: Context) => JSON.stringify(context.messages.at(-1));
		expect(textOf((sent[3] as Context).messages.at(-1))).toContain('FOCUS\n"Fix TestMaxLen"');
		expect(last(sent[4] as Context)).toBe(last(sent[3] as Context));
		expect(taskMessages(sent[4] as Context)).toHaveLength(1);

		// The policy is in the system prompt; /pc status reports the broker's figures.
		expect((sent[0] as Context).systemPrompt).toContain("Prime Context policy");
		const status = await session.agentSession.prompt("/pc status");
		expect(status.command?.message).toMatch(/^mode: on \(this session\)$/m);

		expect(status.command?.message).toMatch(/structured-capsule.*1/);
		expect(status.command?.message).toMatch(/delta-capsule.*1/);
	});

	it("restores the root request after compaction drops it, and only then", async () => {
		newWorld({ compaction: { keepRecentTokens: 1 } });
		const sent: Context[] = [];
		const answers = ["First answer.", "Second answer.", "Third answer."];
		const reply = (context: Context) => {
			// Summary requests (of the history and of a split turn) are answered apart.
			if (textOf(context.messages[0]).startsWith("<conversation>"))
				return fauxAssistantMessage("## Goal\nEarlier work.");
			sent.push(JSON.parse(JSON.stringify(context)));
			return fauxAssistantMessage(answers.shift() ?? "");
		};
		sessions.faux.setResponses(Array.from({ length: 6 }, () => reply));
		const session = await start();
		await session.agentSession.prompt("ROOT: port the parser to the new grammar");
		await session.agentSession.prompt("then add tests for the lexer");
		const compacted = await session.agentSession.compact("command");
		expect(compacted?.status).toBe("compacted");
		await session.agentSession.prompt("go on");

		expect(taskMessages(sent[0] as Context)).toEqual([]);
		expect(taskMessages(sent[1] as Context)).toEqual([]);
		const third = sent[2] as Context;
		expect(third.messages.map(textOf)).not.toContain("ROOT: port the parser to the new grammar");
		const [task] = taskMessages(third);
		expect(task).toContain('ROOT_REQUEST\n"ROOT: port the parser to the new grammar"');
		expect(third.messages.at(-1)).toEqual(expect.objectContaining({ role: "user", content: task }));
	});

	it("a user instruction hidden by a compaction during its own run is restored as an exact copy", async () => {
		newWorld({ compaction: { keepRecentTokens: 1 } });
		const sent: Context[] = [];
		const steps = [
			() => fauxAssistantMessage("Noted."),
			() => fauxAssistantMessage([fauxToolCall("ipython", { code: "await compact.run()" }, { id: "compact-1" })]),
			() => fauxAssistantMessage("Renamed."),
		];
		const reply = (context: Context) => {
			if (textOf(context.messages[0]).startsWith("<conversation>"))
				return fauxAssistantMessage("## Goal\nEarlier work.");
			sent.push(JSON.parse(JSON.stringify(context)));
			return (steps.shift() ?? (() => fauxAssistantMessage("")))();
		};
		sessions.faux.setResponses(Array.from({ length: 8 }, () => reply));
		const session = await start();
		await session.agentSession.prompt("ROOT: keep the public API stable");
		await session.agentSession.prompt("now rename the module to parser_core, and only that");

		const last = sent.at(-1) as Context;
		const visible = last.messages.filter((message) => message.role === "user").map(textOf);
		expect(visible).not.toContain("now rename the module to parser_core, and only that");
		const [task] = taskMessages(last);
		expect(task).toContain('ROOT_REQUEST\n"ROOT: keep the public API stable"');
		expect(task).toContain('LATEST_USER_INSTRUCTION\n"now rename the module to parser_core, and only that"');
	});

	it("/pc commands read, search and change the task, check the setup, and clean up this session only", async () => {
		newWorld();
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: PRINT_LOG }, { id: "run-1" })]),
			fauxAssistantMessage("done"),
		]);
		const session = await start();
		await session.agentSession.prompt("run the tests");
		const pc = async (args: string) => {
			const outcome = await session.agentSession.prompt(`/pc ${args}`);
			return { ok: outcome.status === "ok", text: outcome.command?.message ?? outcome.errorMessage ?? "" };
		};
		expect((await pc("list")).text).toContain("obs_000001");
		expect((await pc("read obs_000001 1509")).text).toContain("2 failed, 1374 passed");
		expect((await pc("search obs_000001 TestMaxLen::test_check_valid[value4]")).text).toMatch(/\d+: .*value4/);
		expect((await pc("focus Fix the length validator")).ok).toBe(true);
		expect((await pc("add Rerun the validator tests")).text).toContain("item_1");
		expect((await pc("done item_1")).ok).toBe(true);
		expect((await pc("pin obs_000001")).ok).toBe(true);
		const status = (await pc("status")).text;
		expect(status).toContain('FOCUS\n"Fix the length validator"');
		expect(status).toContain("PINNED_OUTPUTS\n- obs_000001");
		expect(status).not.toContain("Rerun the validator tests");
		expect((await pc("doctor")).text).toContain("doctor: everything looks fine");

		const wrong = await pc("read obs_000001 two");
		expect(wrong.ok).toBe(false);
		expect(wrong.text).toContain("is not a line range");
		expect(wrong.text).toContain("/pc read <observation-id> [start:end]");
		const backwards = await pc("read obs_000001 5:2");
		expect(backwards.ok).toBe(false);
		expect(backwards.text).toMatch(/^The command \/pc failed: endLine \(2\) must not be before startLine \(5\)/);
		expect(backwards.text).not.toMatch(/at most \d+ lines/);
		expect((await pc("cleanup")).ok).toBe(false);

		expect((await pc("cleanup current")).text).toContain("Removed 1 observation (");
		expect((await (await archiveOf(session)).list()).length).toBe(0);
		expect((await pc("status")).text).not.toContain("PINNED_OUTPUTS");
	});

	it("`import prime_context` in a cell gives the module the session defines", async () => {
		newWorld();
		const sent: Context[] = [];
		sessions.faux.setResponses([
			fauxAssistantMessage(
				fauxToolCall("ipython", {
					code: "import prime_context as pc\nprint(pc is prime_context)\nprint((await pc.status()).splitlines()[0])",
				}),
			),
			(context) => {
				sent.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage("done");
			},
		]);
		const session = await start();
		expect((await session.agentSession.prompt("check the module")).status).toBe("ok");
		expect(toolResults(sent[0] as Context)).toEqual(["True\nPrime Context status"]);
	});

	it("a fork keeps pinned and parent ids readable; /pc mode off leaves new results untouched", async () => {
		newWorld();
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: PRINT_LOG }, { id: "run-1" })]),
			fauxAssistantMessage([fauxToolCall("ipython", { code: "print('x' * 30000)" }, { id: "run-2" })]),
			fauxAssistantMessage("done"),
		]);
		const parent = await start();
		await parent.agentSession.prompt("run the tests");
		const [second, first] = await (await archiveOf(parent)).list();
		expect(first && second).toBeTruthy();
		const pin = await parent.agentSession.prompt(`/pc pin ${first?.id}`);
		expect(pin.status).toBe("ok");
		const parentId = parent.session.id;
		await parent.dispose();

		const fork = await start({ fork: parentId });
		const forkArchive = await archiveOf(fork);
		expect((await forkArchive.get(first?.id as string)).bytes).toBe(LOG.length);
		const read = await fork.agentSession.prompt(`/pc read ${first?.id} 3:4`);
		expect(read.command?.message).toContain(LOG.toString("utf8").split("\n")[2]);
		const parentRead = await fork.agentSession.prompt(`/pc read ${second?.id} 1`);
		expect(parentRead.status).toBe("ok");
		expect(parentRead.command?.message).toContain("x".repeat(100));
		expect((await fork.agentSession.prompt("/pc status")).command?.message).toContain(first?.id);

		const sent: Context[] = [];
		sessions.faux.setResponses([
			fauxAssistantMessage([fauxToolCall("ipython", { code: PRINT_LOG }, { id: "run-3" })]),
			(context) => {
				sent.push(JSON.parse(JSON.stringify(context)));
				return fauxAssistantMessage("done");
			},
		]);
		expect((await fork.agentSession.prompt("/pc mode off")).command?.message).toContain("off");
		expect((await fork.agentSession.prompt("/pc status")).command?.message).toMatch(/^mode: off \(this session\)$/m);
		await fork.agentSession.prompt("run them again");
		const raw = toolResults(sent[0] as Context).at(-1) as string;
		expect(raw).not.toContain("<prime_context_output");
		expect(raw.startsWith(LOG.subarray(0, 200).toString("utf8"))).toBe(true);
		expect(raw).toContain("[... output truncated at 65536 chars ...]");
	});
});
