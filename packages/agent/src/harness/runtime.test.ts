import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
	type FauxProviderRegistration,
	type FauxResponseFactory,
	fauxAssistantMessage,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sectionHash } from "./index-record.js";
import { rankingKey } from "./prompt-index.js";
import { REVIEW_SYSTEM_PROMPT } from "./refine-prompts.js";
import { HarnessRuntime } from "./runtime.js";

let faux: FauxProviderRegistration;
let world: TempWorld;
beforeAll(() => {
	faux = registerFauxProvider({ provider: "fauxruntime", models: [{ id: "m", maxTokens: 4096 }] });
});
afterAll(() => faux.unregister());
afterEach(() => world?.cleanup());

function openRuntime(): HarnessRuntime {
	world = makeTempWorld();
	const runtime = new HarnessRuntime({
		agentHome: world.home,
		depth: 0,
		model: () => faux.getModel(),
		apiKey: () => "k",
	});
	runtime.open(join(world.home, "sessions", "s1"));
	return runtime;
}

const input = {
	trajectory: "[User]: fix the flaky test\n\n[Assistant]: it passed with -p no:randomly",
	task: "fix it",
};

/**
 * Review calls answered by `answer`, except those `holds` picks: those never answer until their
 * call is aborted (a provider that keeps the connection open), counted in `calls`.
 */
function reviews(holds: (call: number) => boolean, answer = "") {
	const state = { calls: 0, started: [] as (() => void)[] };
	const step: FauxResponseFactory = (context, options) => {
		expect(context.systemPrompt).toBe(REVIEW_SYSTEM_PROMPT);
		const call = state.calls++;
		for (const wake of state.started.splice(0)) wake();
		if (!holds(call)) return fauxAssistantMessage(answer);
		const signal = options?.signal;
		// A call made without the stop signal could never be cut short: it answers, and the test sees that.
		if (!signal) return fauxAssistantMessage("- kept, since nothing could stop the call");
		return new Promise((resolve) => signal.addEventListener("abort", () => resolve(fauxAssistantMessage("late"))));
	};
	faux.setResponses(Array.from({ length: 10 }, () => step));
	return {
		get calls() {
			return state.calls;
		},
		/** Resolves once `n` review calls have been made. */
		async made(n: number): Promise<void> {
			while (state.calls < n) await new Promise<void>((resolve) => state.started.push(resolve));
		},
	};
}

describe("refinements and the session's stop", () => {
	it("a stop cuts the running one's call (recorded as stopped), drops the one queued behind it, and later ones run", async () => {
		const runtime = openRuntime();
		const model = reviews((call) => call === 0);
		const running = runtime.refineInBackground("auto-turns", input);
		const queued = runtime.refineInBackground("auto-compaction", input);
		await model.made(1);
		runtime.stopRefinements();
		expect((await running)?.refinement).toMatchObject({
			id: "ref_0001",
			trigger: "auto-turns",
			status: "stopped",
			summary: "Stopped during the review call: the session was stopped or closed. Nothing was changed.",
		});
		expect(await queued).toBeUndefined();
		expect(model.calls).toBe(1);
		// A refinement asked for after the stop runs as usual.
		expect((await runtime.refineInBackground("auto-turns", input))?.refinement).toMatchObject({
			id: "ref_0002",
			status: "rejected",
		});
		expect(runtime.harness.refinements().map((refinement) => refinement.status)).toEqual(["stopped", "rejected"]);
	});

	it("a /refine waiting behind a stopped one is refused with what to do, and changes nothing", async () => {
		const runtime = openRuntime();
		const model = reviews((call) => call === 0);
		const running = runtime.refineInBackground("auto-turns", input);
		const asked = runtime.refine("command", input).catch((error: Error) => error);
		await model.made(1);
		runtime.stopRefinements();
		expect((await running)?.refinement.status).toBe("stopped");
		expect(((await asked) as Error).message).toBe(
			"the session was stopped before this refinement started; nothing was changed. Ask for it again.",
		);
		expect(runtime.harness.refinements()).toHaveLength(1);
	});

	it("closing stops the running one and waits for its record; none starts afterwards", async () => {
		const runtime = openRuntime();
		const model = reviews((call) => call === 0);
		runtime.harness.create("memory", "kept", "written before");
		const store = readFileSync(runtime.harness.path("local"));
		const running = runtime.refineInBackground("auto-turns", input);
		const queued = runtime.refineInBackground("auto-compaction", input);
		await model.made(1);
		await runtime.close();
		// Recorded by the time close() resolves.
		expect(runtime.harness.refinements().map((refinement) => refinement.status)).toEqual(["stopped"]);
		expect((await running)?.refinement.status).toBe("stopped");
		expect(await queued).toBeUndefined();
		expect(await runtime.refineInBackground("auto-turns", input)).toBeUndefined();
		expect(((await runtime.refine("command", input).catch((error: Error) => error)) as Error).message).toBe(
			"the session is closing, so no refinement starts now.",
		);
		expect(model.calls).toBe(1);
		expect(readFileSync(runtime.harness.path("local")).equals(store)).toBe(true);
	});
});

describe("the section for a provider call", () => {
	it("stays the one taken at the last boundary while the harness changes, and records where a boundary takes a new one", () => {
		const runtime = openRuntime();
		// An empty harness has no order to keep: nothing to record.
		const first = runtime.sectionForCall("task");
		expect(first.record).toBeUndefined();
		runtime.harness.create("memory", "new", "landed during the run");
		expect(runtime.sectionForCall("task")).toEqual({ text: first.text });
		runtime.markBoundary();
		const next = runtime.sectionForCall("task");
		expect(next.record).toEqual({ rankedFor: rankingKey("task"), sha256: sectionHash(next.text) });
		expect(next.text).toContain("- new (local): landed during the run");
		// A boundary with nothing changed is no change.
		runtime.markBoundary();
		expect(runtime.sectionForCall("task")).toEqual({ text: next.text });
	});
});
