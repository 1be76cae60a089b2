import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import { allText, cell, scriptAgents } from "./agent-scripts.js";

const sessions = useFauxSessions({ provider: "fauxs", models: [{ id: "m" }] });

it("a session announces it became idle at a prompt's end and at a woken turn's end, each time with nothing left to run", async () => {
	const started = await sessions.start();
	sessions.faux.setResponses([fauxAssistantMessage("Answered."), fauxAssistantMessage("Took the note.")]);
	const busyWhenHeard: boolean[] = [];
	let woken: () => void = () => {};
	const wokenEnded = new Promise<void>((resolve) => {
		woken = resolve;
	});
	started.agentSession.onIdle(() => {
		busyWhenHeard.push(!started.agentSession.isIdle());
		if (busyWhenHeard.length === 2) woken();
	});
	expect((await started.agentSession.prompt("hello")).status).toBe("ok");
	expect(busyWhenHeard).toEqual([false]);
	started.agentSession.deliverExternal({ customType: "schedule", content: "[scheduled: a note]" });
	expect(started.agentSession.isIdle()).toBe(false);
	await wokenEnded;
	expect(busyWhenHeard).toEqual([false, false]);
	expect(sessions.faux.state.callCount).toBe(2);
});

it("an abort during a prompt announces idle once, when the aborted prompt has ended, not at the abort", async () => {
	const started = await sessions.start();
	const busyWhenHeard: boolean[] = [];
	started.agentSession.onIdle(() => busyWhenHeard.push(!started.agentSession.isIdle()));
	sessions.faux.setResponses([
		// The user stops the run while its call streams.
		() => {
			started.agentSession.abort();
			return fauxAssistantMessage("too late");
		},
	]);
	expect((await started.agentSession.prompt("work")).status).toBe("aborted");
	expect(busyWhenHeard).toEqual([false]);
});

it("whenSettled returns once the turns the notices of two levels of sub-agents woke have ended, with every agent idle", async () => {
	sessions.newWorld({ RLM_MAX_DEPTH: "2" });
	const started = await sessions.start();
	const seen = scriptAgents(sessions, {
		root: [
			cell('await rlm("delegate to a leaf", name="mid")'),
			fauxAssistantMessage("Spawned mid."),
			fauxAssistantMessage("Noted mid."),
		],
		mid: [
			cell('await rlm("do the leaf work", name="leaf")'),
			fauxAssistantMessage("Spawned leaf."),
			fauxAssistantMessage("Leaf noted."),
		],
		leaf: [cell("print(6 * 7)"), fauxAssistantMessage("leaf done: 42")],
	});
	await started.agentSession.prompt("delegate");
	await started.whenSettled();
	expect(started.agentSession.isIdle()).toBe(true);
	expect(started.children.isIdle()).toBe(true);
	// Mid ends twice without replying (its task, then the turn leaf's notice woke): two notices,
	// the second only after leaf's whole run. The root answered both before it settled.
	const last = seen.get("root")?.at(-1);
	expect(allText(last).match(/\[rlm notice: completed_without_reply\] Sub-agent "mid"/g)?.length).toBe(2);
	expect(started.session.branch().at(-1)).toMatchObject({ type: "message", message: { role: "assistant" } });
	expect(seen.get("mid")?.length).toBe(3);
	expect(allText(seen.get("mid")?.at(-1))).toContain('[rlm notice: completed_without_reply] Sub-agent "leaf"');
	expect(seen.get("leaf")?.length).toBe(2);
});
