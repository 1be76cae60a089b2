import { afterEach, expect, it, vi } from "vitest";
import { Emitter } from "../emitter.js";
import { type SettleState, whenSettled } from "./settling.js";

/** A session as settling sees it: flags set by the test, and the change events it announces. */
function sessionState(start: { busy?: boolean; held?: boolean } = {}) {
	const changes = new Emitter();
	let listeners = 0;
	const state = {
		busy: start.busy ?? false,
		held: start.held ?? false,
		checks: 0,
		resumes: 0,
		/** What a held continuation does when asked again. */
		onResume: () => {},
		get listeners() {
			return listeners;
		},
		change: () => changes.emit(),
	};
	const settle: SettleState = {
		busy: () => {
			state.checks++;
			return state.busy;
		},
		held: () => state.held,
		resumeHeld: async () => {
			state.resumes++;
			state.onResume();
		},
		onChange: (listener) => {
			listeners++;
			const stop = changes.on(listener);
			return () => {
				listeners--;
				stop();
			};
		},
	};
	return { state, settle };
}

/** Resolves once every callback already queued, and the immediates they queue, have run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

afterEach(() => {
	vi.useRealTimers();
});

it("resolves at once for an idle session with nothing held, asking once", async () => {
	const { state, settle } = sessionState();
	await whenSettled(settle);
	expect(state.checks).toBe(1);
	expect(state.resumes).toBe(0);
});

it("waits while busy, asks again only after a change event, and settles without any clock", async () => {
	// No timer runs: a wait that polls on a clock never ends here.
	vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "Date"] });
	const { state, settle } = sessionState({ busy: true });
	let settled = false;
	const waiting = whenSettled(settle).then(() => {
		settled = true;
	});
	await turn();
	expect(state.checks).toBe(1);
	state.change();
	await turn();
	expect(state.checks).toBe(2);
	expect(settled).toBe(false);
	state.busy = false;
	state.change();
	await waiting;
	expect(state.checks).toBe(3);
	expect(state.listeners).toBe(0);
});

it("a change announced before its state flips is checked once the promise callbacks it queued have run", async () => {
	const { state, settle } = sessionState({ busy: true });
	const waiting = whenSettled(settle);
	// As a sub-agent's end: announced first, its work settles a few promise callbacks later.
	state.change();
	void Promise.resolve()
		.then(() => undefined)
		.then(() => {
			state.busy = false;
		});
	await waiting;
	expect(state.checks).toBe(2);
});

it("asks a held continuation again once idle, and waits for the turn it starts", async () => {
	const { state, settle } = sessionState({ held: true });
	state.onResume = () => {
		state.held = false;
		state.busy = true;
	};
	let settled = false;
	const waiting = whenSettled(settle).then(() => {
		settled = true;
	});
	await turn();
	expect(state.resumes).toBe(1);
	expect(settled).toBe(false);
	state.busy = false;
	state.change();
	await waiting;
	expect(state.resumes).toBe(1);
	expect(state.checks).toBe(3);
});

it("an abort ends the wait while the session is still busy, and stops listening", async () => {
	const { state, settle } = sessionState({ busy: true });
	const controller = new AbortController();
	const waiting = whenSettled(settle, controller.signal);
	await turn();
	expect(state.listeners).toBe(1);
	controller.abort();
	await waiting;
	expect(state.busy).toBe(true);
	expect(state.listeners).toBe(0);
	expect(state.checks).toBe(1);
});

it("an aborted signal resolves at once without asking", async () => {
	const { state, settle } = sessionState({ busy: true });
	await whenSettled(settle, AbortSignal.abort());
	expect(state.checks).toBe(0);
});
