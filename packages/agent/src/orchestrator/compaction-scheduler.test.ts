import { expect, it } from "vitest";
import type { CompactResult } from "../compaction/index.js";
import type { CompactionReason } from "../extensions/index.js";
import { CompactionScheduler } from "./compaction-scheduler.js";

/** The scheduler with a compaction the test ends (one gate per call) and a run flag it sets. */
function setup() {
	let running = false;
	const calls: { reason: CompactionReason; instructions?: string }[] = [];
	const ends: (() => void)[] = [];
	const events: string[] = [];
	const waiters: { n: number; resolve: () => void }[] = [];
	const scheduler = new CompactionScheduler(
		async (reason, instructions) => {
			calls.push({ reason, instructions });
			for (const waiter of waiters) if (calls.length >= waiter.n) waiter.resolve();
			events.push(`start ${instructions}`);
			await new Promise<void>((resolve) => ends.push(resolve));
			events.push(`end ${instructions}`);
			if (instructions === "throws") throw new Error("summary failed");
			return undefined as CompactResult | undefined;
		},
		() => running,
	);
	/** Resolves once the compaction call number `n` (from 1) has started. */
	const started = (n: number) =>
		calls.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
	return {
		scheduler,
		calls,
		ends,
		events,
		setRunning: (value: boolean) => {
			running = value;
		},
		started,
	};
}

it("during a run a request waits for the turn boundary; a later one replaces it; taking it clears it", () => {
	const { scheduler, calls, setRunning } = setup();
	setRunning(true);
	scheduler.request("extension", "first");
	scheduler.request("kernel", "second");
	expect(calls).toEqual([]);
	expect(scheduler.takeRequest()).toEqual({ reason: "kernel", customInstructions: "second" });
	expect(scheduler.takeRequest()).toBeUndefined();
});

it("while idle requests start at once, one after another, and settled() resolves only after the last", async () => {
	const { scheduler, calls, ends, events, started } = setup();
	scheduler.request("extension", "a");
	scheduler.request("extension", "b");
	let settled = false;
	const done = scheduler.settled().then(() => {
		settled = true;
	});
	await started(1);
	expect(calls).toEqual([{ reason: "extension", instructions: "a" }]);
	ends[0]?.();
	await started(2);
	expect(settled).toBe(false);
	ends[1]?.();
	await done;
	expect(events).toEqual(["start a", "end a", "start b", "end b"]);
	// Idle requests never wait for a boundary.
	expect(scheduler.takeRequest()).toBeUndefined();
});

it("a compaction that throws does not stop the queue: the next one still runs and settled() resolves", async () => {
	const { scheduler, ends, events, started } = setup();
	scheduler.request("extension", "throws");
	scheduler.request("extension", "after");
	await started(1);
	ends[0]?.();
	await started(2);
	ends[1]?.();
	await scheduler.settled();
	expect(events).toEqual(["start throws", "end throws", "start after", "end after"]);
});
