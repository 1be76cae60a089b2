import { expect, it } from "vitest";
import type { RunOutcome } from "./run-outcome.js";
import { type SessionPhase, SessionStates } from "./session-state.js";
import { type WakeHost, WakeScheduler } from "./wake-scheduler.js";

/**
 * The scheduler over the session's real state, with a host whose queue the test fills: each
 * `runQueued` takes one message and ends as the test says (at once, or when a gate opens).
 */
function setup(options: { history?: boolean; outcomes?: (RunOutcome | Error)[] } = {}) {
	const states = new SessionStates();
	const queue: string[] = [];
	const taken: string[] = [];
	const outcomes = options.outcomes ?? [];
	let gate: Promise<void> | undefined;
	const host: WakeHost = {
		hasQueued: () => queue.length > 0,
		hasHistory: () => options.history ?? true,
		runQueued: async () => {
			await gate;
			taken.push(queue.shift() as string);
			const outcome = outcomes.shift() ?? { status: "ok" };
			if (outcome instanceof Error) throw outcome;
			return outcome;
		},
	};
	const wakes = new WakeScheduler(host, states);
	const heard: RunOutcome[] = [];
	wakes.onOutcome((outcome) => heard.push(outcome));
	const phases: SessionPhase[] = [];
	states.onChange((state) => {
		if (phases.at(-1) !== state.phase) phases.push(state.phase);
	});
	const hold = () => {
		let open = () => {};
		gate = new Promise((resolve) => {
			open = resolve;
		});
		return () => {
			gate = undefined;
			open();
		};
	};
	return { states, queue, taken, wakes, heard, phases, hold };
}

it("a kick while idle runs a turn for each waiting message until none waits, then the session rests", async () => {
	const { states, queue, taken, wakes, heard, phases } = setup();
	queue.push("a", "b");
	wakes.kick();
	expect(states.state).toEqual({ phase: "waking", wakes: "on", hold: false });
	expect(wakes.waiting).toBe(true);
	await states.whenResting();
	expect(taken).toEqual(["a", "b"]);
	expect(heard).toEqual([{ status: "ok" }, { status: "ok" }]);
	expect(states.state).toEqual({ phase: "idle", wakes: "on" });
	expect(phases).toEqual(["waking", "idle"]);
});

it("a message that arrives during a woken turn is taken by the same waking", async () => {
	const { states, queue, taken, wakes, hold, phases } = setup();
	const release = hold();
	queue.push("a");
	wakes.kick();
	queue.push("b");
	// Already waking: the kick for "b" starts nothing of its own.
	wakes.kick();
	release();
	await states.whenResting();
	expect(taken).toEqual(["a", "b"]);
	expect(phases).toEqual(["waking", "idle"]);
});

it("before the first prompt nothing wakes: there is no conversation to continue", () => {
	const { states, queue, wakes, phases } = setup({ history: false });
	queue.push("a");
	wakes.kick();
	expect(states.state).toEqual({ phase: "idle", wakes: "on" });
	// The message waits (for the first prompt): the session is not idle in `isIdle`'s sense.
	expect(wakes.waiting).toBe(true);
	expect(phases).toEqual([]);
});

it("during a prompt a kick waits; the prompt's end and the next kick start the turn", async () => {
	const { states, queue, taken, wakes, phases } = setup();
	states.beginPrompt();
	queue.push("a");
	wakes.kick();
	expect(states.state.phase).toBe("prompting");
	states.endTurn("prompting");
	wakes.kick();
	await states.whenResting();
	expect(taken).toEqual(["a"]);
	expect(phases).toEqual(["prompting", "idle", "waking", "idle"]);
});

it("paused wakes start nothing until a prompt turns them on again", () => {
	const { states, queue, wakes } = setup();
	states.pause();
	queue.push("a");
	wakes.kick();
	expect(states.state).toEqual({ phase: "idle", wakes: "paused" });
	expect(wakes.waiting).toBe(false);
	states.beginPrompt();
	expect(states.state).toEqual({ phase: "prompting", wakes: "on", hold: false });
	expect(wakes.waiting).toBe(true);
});

it("a pause during woken turns stops them after the current one; what waits stays for the next prompt", async () => {
	const { states, queue, taken, wakes, hold } = setup();
	const release = hold();
	queue.push("a", "b");
	wakes.kick();
	states.pause();
	expect(states.state).toEqual({ phase: "waking", wakes: "paused", hold: false });
	release();
	await states.whenResting();
	expect(taken).toEqual(["a"]);
	expect(queue).toEqual(["b"]);
	expect(states.state).toEqual({ phase: "idle", wakes: "paused" });
});

it("an aborted woken turn ends the waking though messages still wait; the next kick goes on", async () => {
	const { states, queue, taken, wakes, heard, phases } = setup({ outcomes: [{ status: "aborted" }] });
	const both = new Promise<void>((resolve) => wakes.onOutcome(() => heard.length === 2 && resolve()));
	queue.push("a", "b");
	wakes.kick();
	// The waking ends after "a"; its own closing kick starts a new one for "b".
	await both;
	await states.whenResting();
	expect(phases).toEqual(["waking", "idle", "waking", "idle"]);
	expect(heard).toEqual([{ status: "aborted" }, { status: "ok" }]);
	expect(taken).toEqual(["a", "b"]);
});

it("a turn the loop refuses pauses wakes and is reported once as an error", async () => {
	const { states, queue, wakes, heard } = setup({ outcomes: [new Error("The agent cannot continue.")] });
	queue.push("a", "b");
	wakes.kick();
	await states.whenResting();
	expect(heard).toEqual([{ status: "error", errorMessage: "The agent cannot continue." }]);
	expect(states.state).toEqual({ phase: "idle", wakes: "paused" });
	expect(queue).toEqual(["b"]);
});

it("woken from a held continuation, the turns end held again unless a stop decides anew", async () => {
	const { states, queue, wakes } = setup();
	states.beginPrompt();
	states.setHold(true);
	states.endTurn("prompting");
	expect(states.state).toEqual({ phase: "held", wakes: "on" });
	queue.push("a");
	wakes.kick();
	expect(states.state).toEqual({ phase: "waking", wakes: "on", hold: true });
	await states.whenResting();
	expect(states.state).toEqual({ phase: "held", wakes: "on" });
});

it("a move that does not fit the phase is refused, naming both", () => {
	const { states } = setup();
	expect(() => states.endTurn("prompting")).toThrow(
		"The session cannot end prompting while idle (only while prompting).",
	);
	states.beginPrompt();
	expect(() => states.beginPrompt()).toThrow(
		"The session cannot begin a prompt while prompting (only while idle or held).",
	);
	expect(() => states.beginResume()).toThrow(
		"The session cannot resume a held continuation while prompting (only while held).",
	);
});
