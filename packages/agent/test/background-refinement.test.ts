import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
	type AssistantMessage,
	type Context,
	type FauxResponseFactory,
	fauxAssistantMessage,
	type Message,
} from "@mariozechner/pi-ai";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import {
	type HoldingServer,
	openAiCompletionsServer,
	type ScriptedReply,
} from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { REFINEMENT_ENTRY } from "../src/builtin/harness/index.js";
import { HARNESS_INDEX_ENTRY, Harness, PLANNING_SYSTEM_PROMPT, REVIEW_SYSTEM_PROMPT } from "../src/harness/index.js";
import { type StartedSession, startSession } from "../src/startup/index.js";
import { cell } from "./agent-scripts.js";

const sessions = useFauxSessions({ provider: "fauxbg", models: [{ id: "m", maxTokens: 4096 }] });
beforeEach(() => {
	// Automatic refinement on, as for a user (the shared helper turns it off).
	sessions.newWorld({ PRIME_AGENT_AUTO_REFINE: "" });
});

function storesOf(started: StartedSession): Harness {
	return new Harness({
		local: join(started.session.artifactDir, "harness"),
		global: join(started.paths.root, "harness"),
	});
}

/** A promise settled from outside. */
function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
	let open: (value: T) => void = () => {};
	const promise = new Promise<T>((resolve) => {
		open = resolve;
	});
	return { promise, open };
}

/**
 * Waits for `released`, or gives up after `ms`: with a refinement that blocks the turn, nothing
 * would ever release it, and the test must fail on the order it records rather than hang.
 */
function heldUntil(released: Promise<void>, ms = 8_000): Promise<void> {
	return Promise.race([released, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
}

/** 25 assistant turns: 24 cells and an answer (the automatic refinement is due after the last). */
const TWENTY_FIVE_TURNS: AssistantMessage[] = [
	...Array.from({ length: 24 }, (_, i) => cell(`t = ${i}`)),
	fauxAssistantMessage("worked a while"),
];

/** Script the faux model: the agent's calls take `turns` in order; review and planning calls go to their handlers. */
function route(
	turns: (AssistantMessage | ((context: Context) => AssistantMessage | Promise<AssistantMessage>))[],
	refine: { review: (context: Context) => Promise<AssistantMessage>; plan?: () => AssistantMessage },
): Context[] {
	const seen: Context[] = [];
	const step: FauxResponseFactory = async (context) => {
		if (context.systemPrompt === REVIEW_SYSTEM_PROMPT) return refine.review(context);
		if (context.systemPrompt === PLANNING_SYSTEM_PROMPT) return refine.plan?.() ?? fauxAssistantMessage("[]");
		seen.push(JSON.parse(JSON.stringify(context)));
		const next = turns.shift();
		if (!next) return fauxAssistantMessage("(no more turns)");
		return typeof next === "function" ? next(context) : next;
	};
	sessions.faux.setResponses(Array.from({ length: 100 }, () => step));
	return seen;
}

describe("the automatic refinement", () => {
	it("runs beside the session: the user's next prompt after the 25th turn starts before its review answers", async () => {
		const started = await sessions.start();
		const events: string[] = [];
		const reviewAsked = gate();
		const secondPromptCalled = gate();
		route([...TWENTY_FIVE_TURNS, fauxAssistantMessage("second answer")], {
			review: async (context) => {
				events.push("review asked");
				reviewAsked.open();
				expect(wireText(context.messages[0] as Message)).toContain("[User]: work for a while");
				await heldUntil(secondPromptCalled.promise);
				events.push("review answered");
				return fauxAssistantMessage("");
			},
		});
		expect((await started.agentSession.prompt("work for a while")).status).toBe("ok");
		await reviewAsked.promise;
		started.agentSession.subscribe((event) => {
			if (event.type === "turn_start") {
				events.push("second prompt's call");
				secondPromptCalled.open();
			}
		});
		const second = await started.agentSession.prompt("and now this");
		expect(second.status).toBe("ok");
		expect(second.lastAssistant?.content).toEqual([{ type: "text", text: "second answer" }]);
		await vi.waitFor(() => expect(storesOf(started).refinements()).toHaveLength(1), { timeout: 20_000 });
		expect(events).toEqual(["review asked", "second prompt's call", "review answered"]);
		expect(storesOf(started).refinements()[0]).toMatchObject({ trigger: "auto-turns", status: "rejected" });
	});

	it("that finishes mid-run leaves the run's system prompt as it was; the next run gets the change, recorded", async () => {
		const started = await sessions.start();
		const reviewReleased = gate();
		const seen = route(
			[
				...TWENTY_FIVE_TURNS,
				// The second run's first call: the refinement finishes (a memory lands) before the run's next call.
				async () => {
					reviewReleased.open();
					await vi.waitFor(() => expect(storesOf(started).find("memory", "learned")).toBeDefined(), {
						timeout: 20_000,
					});
					return cell("x = 1");
				},
				fauxAssistantMessage("second run done"),
				fauxAssistantMessage("third run done"),
			],
			{
				review: async () => {
					await heldUntil(reviewReleased.promise);
					return fauxAssistantMessage("- the suite needs -p no:randomly (it passed with it)");
				},
				plan: () =>
					fauxAssistantMessage(
						JSON.stringify([{ op: "create", kind: "memory", name: "learned", text: "pytest needs -p no:randomly" }]),
					),
			},
		);
		await started.agentSession.prompt("work for a while");
		await started.agentSession.prompt("go on");
		const prompts = seen.map((context) => context.systemPrompt as string);
		expect(prompts).toHaveLength(27);
		expect(storesOf(started).refinements()[0]).toMatchObject({ trigger: "auto-turns", status: "applied" });
		// The run's second call came after the memory landed, with the system prompt its first call had.
		expect(prompts[26]).toBe(prompts[25]);
		expect(prompts[26]).not.toContain("learned");
		expect(started.session.customEntries(HARNESS_INDEX_ENTRY)).toEqual([]);

		await started.agentSession.prompt("once more");
		const next = seen[27]?.systemPrompt as string;
		expect(next).toContain("- learned (local): pytest needs -p no:randomly");
		// The boundary is on the branch where the new system prompt starts: after the third prompt,
		// before its answer.
		const kinds = started.session
			.branch()
			.slice(-3)
			.map((entry) =>
				entry.type === "custom" ? entry.customType : entry.type === "message" ? entry.message.role : entry.type,
			);
		expect(kinds).toEqual(["user", HARNESS_INDEX_ENTRY, "assistant"]);
		expect(started.session.customEntries(HARNESS_INDEX_ENTRY)).toHaveLength(1);
	});

	it("never starts for a 25th turn the user stopped", async () => {
		const started = await sessions.start();
		let reviews = 0;
		route(
			[
				...TWENTY_FIVE_TURNS.slice(0, 24),
				// The user stops the run while its 25th call streams.
				() => {
					started.agentSession.abort();
					return fauxAssistantMessage("too late");
				},
			],
			{
				review: async () => {
					reviews++;
					return fauxAssistantMessage("");
				},
			},
		);
		expect((await started.agentSession.prompt("work for a while")).status).toBe("aborted");
		// The end stops and records any refinement under way: there must be none to record.
		await started.dispose();
		expect(reviews).toBe(0);
		expect(storesOf(started).refinements()).toEqual([]);
	});
});

describe("stopping a refinement whose provider holds the answer", () => {
	let world: TempWorld | undefined;
	let server: HoldingServer | undefined;
	let started: StartedSession | undefined;
	afterEach(async () => {
		// The server first: a refinement its held call never ends must not hold the session's end too.
		await server?.close();
		await started?.dispose();
		world?.cleanup();
		started = world = server = undefined;
	});

	/** A session on a loopback model that answers 25 turns and then holds every review call open. */
	async function heldReview(extra: ScriptedReply[] = []): Promise<StartedSession> {
		const turns: ScriptedReply[] = [
			...Array.from({ length: 24 }, (_, i) => ({ code: `t = ${i}` })),
			{ text: "worked a while" },
		];
		const isReview = (body: Record<string, unknown>) =>
			(body.messages as { content?: unknown }[])[0]?.content === REVIEW_SYSTEM_PROMPT;
		// The review call takes index 25: the replies after it start at 26.
		server = await openAiCompletionsServer([...turns, { text: "(held)" }, ...extra], { hold: isReview });
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
		world.writeHome("models.json", {
			providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
		});
		started = await startSession({ cwd: world.project, env: world.env, model: "local/coder" });
		return started;
	}

	/** Resolves with the milliseconds `work` took, or fails once it took longer than `ms`. */
	async function within(ms: number, what: string, work: Promise<unknown>): Promise<number> {
		const start = Date.now();
		let timer: NodeJS.Timeout | undefined;
		const late = new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
		});
		try {
			await Promise.race([work, late]);
		} finally {
			clearTimeout(timer);
		}
		return Date.now() - start;
	}

	it("the session's abort (Ctrl-C, Esc, SIGTERM) cuts its call at once and records it as stopped; the stores are intact", async () => {
		const session = await heldReview([{ text: "still here" }]);
		const stores = storesOf(session);
		stores.create("memory", "kept", "written before the refinement");
		stores.create("memory", "shared", "in the global store", "global");
		const before = { local: readFileSync(stores.path("local")), global: readFileSync(stores.path("global")) };
		expect((await session.agentSession.prompt("work for a while")).status).toBe("ok");
		const review = await (server as HoldingServer).held(0);
		session.agentSession.abort();
		await within(10_000, "the held review call's abort", review.closed);
		await within(
			10_000,
			"recording the stopped refinement",
			vi.waitFor(() => expect(stores.refinements()).toHaveLength(1), { timeout: 10_000 }),
		);
		expect(stores.refinements()[0]).toMatchObject({
			trigger: "auto-turns",
			status: "stopped",
			summary: "Stopped during the review call: the session was stopped or closed. Nothing was changed.",
			edits: [],
		});
		expect(readFileSync(stores.path("local")).equals(before.local)).toBe(true);
		expect(readFileSync(stores.path("global")).equals(before.global)).toBe(true);
		// The session goes on; nothing more is refined (no planning call, no second review).
		expect((await session.agentSession.prompt("and now?")).lastAssistant?.content).toEqual([
			{ type: "text", text: "still here" },
		]);
		expect(server?.requests).toHaveLength(27);
		expect(stores.refinements()).toHaveLength(1);
	});

	it("the session's end stops it at once, records it, and starts none after", async () => {
		const session = await heldReview();
		const stores = storesOf(session);
		stores.create("memory", "kept", "written before the refinement");
		const before = readFileSync(stores.path("local"));
		expect((await session.agentSession.prompt("work for a while")).status).toBe("ok");
		const review = await (server as HoldingServer).held(0);
		started = undefined;
		await within(15_000, "the session's end", session.dispose());
		await within(5_000, "the held review call's abort", review.closed);
		expect(stores.refinements().map((refinement) => refinement.status)).toEqual(["stopped"]);
		expect(session.session.customEntries(REFINEMENT_ENTRY).map((entry) => entry.data)).toEqual([
			{
				id: "ref_0001",
				trigger: "auto-turns",
				status: "stopped",
				summary: "Stopped during the review call: the session was stopped or closed. Nothing was changed.",
			},
		]);
		expect(readFileSync(stores.path("local")).equals(before)).toBe(true);
		expect(server?.requests).toHaveLength(26);
	});
});
