import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
	type Context,
	fauxAssistantMessage,
	fauxToolCall,
	type Message,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import { Type } from "typebox";
import { afterAll, afterEach, beforeEach, expect, it } from "vitest";
import { AgentSession } from "../src/orchestrator/index.js";
import type { StopVerdict } from "../src/orchestrator/run-supervisor.js";
import type { SessionPhase, SessionState } from "../src/orchestrator/session-state.js";
import { Session } from "../src/session/index.js";

/**
 * The session's state moves, driven through a real `AgentSession` on the faux model: a tool that
 * waits for the test holds a run open where its state is read; each test awaits the moves.
 */

const faux = registerFauxProvider({ provider: "faux-state", models: [{ id: "m", contextWindow: 200_000 }] });
afterAll(() => faux.unregister());
const dirs: string[] = [];
/** Model calls made by the current test. */
let callsBefore = 0;
const calls = () => faux.state.callCount - callsBefore;
beforeEach(() => {
	callsBefore = faux.state.callCount;
});
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A promise the test resolves. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
	let open: (value: T) => void = () => {};
	const promise = new Promise<T>((resolve) => {
		open = resolve;
	});
	return { promise, open };
}

/** `wait`: a tool whose call lasts until the test opens `tool.release` (or the run is aborted). */
function waitTool(onCall: () => void) {
	let release = gate();
	const tool: AgentTool = {
		name: "wait",
		label: "wait",
		description: "Waits.",
		parameters: Type.Object({}),
		execute: async (_id, _params, signal) => {
			onCall();
			await Promise.race([
				release.promise,
				new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true })),
			]);
			release = gate();
			return { content: [{ type: "text", text: "waited" }], details: {} };
		},
	};
	return { tool, release: () => release.open() };
}

function openSession(tools: AgentTool[] = [], keepRecentTokens = 20_000) {
	const dir = mkdtempSync(join(tmpdir(), "prime-agent-state-"));
	dirs.push(dir);
	const session = Session.create({ dir: join(dir, "sessions"), cwd: dir });
	const agentSession = new AgentSession(session, {
		model: faux.getModel(),
		apiKey: "test-key",
		systemPrompt: "You are a test.",
		tools,
		compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens },
	});
	const phases: SessionPhase[] = [];
	agentSession.onState((state) => {
		if (phases.at(-1) !== state.phase) phases.push(state.phase);
	});
	return { agentSession, phases };
}

/** Resolves with the first state `test` accepts (now or later). */
function stateWhere(agentSession: AgentSession, test: (state: SessionState) => boolean): Promise<SessionState> {
	if (test(agentSession.state)) return Promise.resolve(agentSession.state);
	return new Promise((resolve) => {
		const stop = agentSession.onState((state) => {
			if (!test(state)) return;
			stop();
			resolve(state);
		});
	});
}

function text(message: Message): string {
	if (typeof message.content === "string") return message.content;
	return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

it("a prompt moves idle → prompting → idle; the loop's run is in the state while it runs, and the session is not idle then", async () => {
	const called = gate();
	const wait = waitTool(() => called.open());
	const { agentSession, phases } = openSession([wait.tool]);
	faux.setResponses([fauxAssistantMessage(fauxToolCall("wait", {})), fauxAssistantMessage("done")]);
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "on" });
	expect(agentSession.isIdle()).toBe(true);

	const outcome = agentSession.prompt("go");
	await called.promise;
	expect(agentSession.state).toEqual({ phase: "prompting", wakes: "on", hold: false, loop: { compacted: false } });
	expect(agentSession.isIdle()).toBe(false);
	wait.release();

	expect((await outcome).status).toBe("ok");
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "on" });
	expect(agentSession.isIdle()).toBe(true);
	expect(phases).toEqual(["prompting", "idle"]);
});

it("a supervisor that holds ends the prompt held (idle); resumeHeld asks again, and its continuation runs as a woken turn", async () => {
	const { agentSession, phases } = openSession();
	const verdicts: StopVerdict[] = [
		{ hold: true },
		{ continueWith: { customType: "test_continue", content: "go on" } },
		undefined,
	];
	agentSession.setSupervisor({ onWouldStop: () => verdicts.shift() });
	faux.setResponses([fauxAssistantMessage("first"), fauxAssistantMessage("continued")]);

	await agentSession.prompt("go");
	expect(agentSession.state).toEqual({ phase: "held", wakes: "on" });
	expect(agentSession.continuationHeld).toBe(true);
	expect(agentSession.isIdle()).toBe(true);

	const woken = new Promise((resolve) => agentSession.onWakeOutcome(resolve));
	await agentSession.resumeHeld();
	expect(await woken).toMatchObject({ status: "ok" });
	await agentSession.whenIdle();
	expect(phases).toEqual(["prompting", "held", "resuming", "idle", "waking", "idle"]);
	expect(verdicts).toEqual([]);
	expect(calls()).toBe(2);
});

it("a resume counts as work until the supervisor answers; an abort meanwhile drops the continuation and pauses wakes", async () => {
	const { agentSession, phases } = openSession();
	const second = gate<StopVerdict>();
	let signal: AbortSignal | undefined;
	let asked = 0;
	agentSession.setSupervisor({
		onWouldStop: (event) => {
			asked++;
			if (asked === 1) return { hold: true };
			signal = event.signal;
			return second.promise;
		},
	});
	faux.setResponses([fauxAssistantMessage("first")]);
	await agentSession.prompt("go");

	const resumed = agentSession.resumeHeld();
	const resuming = await stateWhere(agentSession, (state) => state.phase === "resuming");
	expect(resuming.wakes).toBe("on");
	expect(agentSession.isIdle()).toBe(false);
	agentSession.abort();
	expect(signal?.aborted).toBe(true);
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "paused" });
	// The supervisor answers late: its continuation is not run.
	second.open({ continueWith: { customType: "test_continue", content: "too late" } });
	await resumed;
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "paused" });
	expect(phases).toEqual(["prompting", "held", "resuming", "idle"]);
	expect(calls()).toBe(1);
});

it("abort while held: the hold is dropped, a delivered message waits for the next prompt and goes with it", async () => {
	const { agentSession, phases } = openSession();
	const verdicts: StopVerdict[] = [{ hold: true }, undefined];
	agentSession.setSupervisor({ onWouldStop: () => verdicts.shift() });
	const sent: Context[] = [];
	faux.setResponses([
		fauxAssistantMessage("first"),
		(context) => {
			sent.push(context);
			return fauxAssistantMessage("second");
		},
	]);
	await agentSession.prompt("go");
	expect(agentSession.state.phase).toBe("held");

	agentSession.abort();
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "paused" });
	expect(agentSession.continuationHeld).toBe(false);
	// A turn would start at once (`kick` is synchronous): none does while wakes are paused.
	agentSession.deliverExternal({ customType: "test_notice", content: "a sub-agent finished" });
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "paused" });
	expect(agentSession.isIdle()).toBe(true);
	await agentSession.resumeHeld();
	expect(agentSession.state.phase).toBe("idle");

	expect((await agentSession.prompt("next")).status).toBe("ok");
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "on" });
	const texts = (sent[0] as Context).messages.map(text);
	expect(texts.filter((part) => part.includes("a sub-agent finished"))).toHaveLength(1);
	expect(texts.filter((part) => part === "next")).toHaveLength(1);
	expect(calls()).toBe(2);
	expect(phases).toEqual(["prompting", "held", "idle", "prompting", "idle"]);
});

it("a compaction asked for mid-run happens at the next turn boundary: the loop's run records it and goes on from the rebuilt context", async () => {
	const called = gate();
	const wait = waitTool(() => called.open());
	const { agentSession } = openSession([wait.tool], 50);
	const summaries: string[] = [];
	const afterCompaction: Context[] = [];
	faux.setResponses([
		fauxAssistantMessage("noted"),
		fauxAssistantMessage(fauxToolCall("wait", {})),
		(context) => {
			summaries.push(text(context.messages[0] as Message));
			return fauxAssistantMessage("## Goal\nThe summary.");
		},
		(context) => {
			afterCompaction.push(context);
			return fauxAssistantMessage("done");
		},
	]);
	await agentSession.prompt(`remember ${"x".repeat(4000)}`);

	const outcome = agentSession.prompt("work");
	await called.promise;
	agentSession.requestCompaction("keep it short");
	// Requested during the run: nothing compacts until the next provider call.
	expect(agentSession.state).toMatchObject({ phase: "prompting", loop: { compacted: false } });
	const loops: (boolean | undefined)[] = [];
	agentSession.onState((state) => {
		if (state.phase === "prompting" && loops.at(-1) !== state.loop?.compacted) loops.push(state.loop?.compacted);
	});
	wait.release();

	const result = await outcome;
	// The run was marked compacted at the boundary, and the mark went with the run's end.
	expect(loops).toEqual([true, undefined]);
	expect(result.status).toBe("ok");
	expect(summaries).toHaveLength(1);
	expect(summaries[0]).toContain("Additional instructions: keep it short");
	expect(text((afterCompaction[0] as Context).messages[0] as Message)).toContain("The summary.");
	// After the run the loop's messages are the session's rebuilt context.
	expect(agentSession.agent.state.messages).toEqual(agentSession.session.context().messages);
	expect(agentSession.state).toEqual({ phase: "idle", wakes: "on" });
});
