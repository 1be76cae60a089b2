import { expect, it, vi } from "vitest";
import type { HiddenMessage } from "../extensions/index.js";
import { ChildManager } from "./manager.js";
import type { ChildEvent, ChildLaunchSpec, ChildRuntime } from "./types.js";

it("a child deleted while starting stays tracked (busy) until it has settled and sent its cancelled notice", async () => {
	const delivered: HiddenMessage[] = [];
	let up: (runtime: ChildRuntime) => void = () => {};
	let disposed = false;
	let noticed = () => {};
	let busyAtNotice: boolean | undefined;
	const notice = new Promise<void>((resolve) => {
		noticed = resolve;
	});
	const manager = new ChildManager({
		parent: {
			sessionFile: "/s.jsonl",
			artifactDir: "/s",
			leafId: () => null,
			appendCustom: () => {},
			deliver: (message) => {
				delivered.push(message);
				busyAtNotice = !manager.isIdle();
				noticed();
			},
		},
		depth: 0,
		maxDepth: 1,
		parentModel: () => "p/m",
		checkModel: (ref) => ref,
		launch: () =>
			new Promise<ChildRuntime>((resolve) => {
				up = resolve;
			}),
	});
	manager.spawn({ task: "slow start", options: { name: "gone" } });
	expect(await manager.delete("gone")).toEqual({ name: "gone", status: "starting" });
	expect(manager.names()).toEqual([]);
	expect(manager.isIdle()).toBe(false);
	up({
		sessionFile: "/s/sub/x.jsonl",
		prompt: async () => ({ status: "ok" }),
		onAssistant: () => () => {},
		onChildUsage: () => () => {},
		onWokenTurnEnd: () => () => {},
		isIdle: () => true,
		hasLiveChildren: false,
		hasHeartbeat: false,
		abort: () => {},
		dispose: async () => {
			disposed = true;
		},
	});
	await notice;
	// Shut down before its notice, and busy until the notice is out.
	expect(disposed).toBe(true);
	expect(busyAtNotice).toBe(true);
	expect(delivered.map((message) => (message.details as { kind: string }).kind)).toEqual(["cancelled"]);
	await vi.waitFor(() => expect(manager.isIdle()).toBe(true), { timeout: 10_000 });
});

/** A runtime whose first prompt ends at once (ok) and whose disposal the test sees. */
function runtime(name: string, disposed: string[]): ChildRuntime {
	return {
		sessionFile: `/s/sub/${name}.jsonl`,
		prompt: async () => ({ status: "ok" }),
		onAssistant: () => () => {},
		onChildUsage: () => () => {},
		onWokenTurnEnd: () => () => {},
		isIdle: () => true,
		hasLiveChildren: false,
		hasHeartbeat: false,
		abort: () => {},
		dispose: async () => {
			disposed.push(name);
		},
	};
}

it("a passive child deleted while a message brings it back: the session launched for it is shut down, and it stays cancelled", async () => {
	const disposed: string[] = [];
	const events: ChildEvent[] = [];
	const launches: ChildLaunchSpec[] = [];
	let back: (runtime: ChildRuntime) => void = () => {};
	let evicted: () => void = () => {};
	const passive = new Promise<void>((resolve) => {
		evicted = resolve;
	});
	let relaunched: () => void = () => {};
	const relaunch = new Promise<void>((resolve) => {
		relaunched = resolve;
	});
	const manager = new ChildManager({
		parent: {
			sessionFile: "/s.jsonl",
			artifactDir: "/s",
			leafId: () => null,
			appendCustom: () => {},
			deliver: () => {},
		},
		depth: 0,
		maxDepth: 1,
		parentModel: () => "p/m",
		checkModel: (ref) => ref,
		onEvent: (event) => {
			events.push(event);
			if (event.type === "child_residency" && event.residency === "passive") evicted();
		},
		// Evicted as soon as the next check finds it finished.
		idleEvictMs: 1,
		launch: async (spec) => {
			launches.push(spec);
			if (!spec.resumeFile) return runtime("first", disposed);
			relaunched();
			return new Promise<ChildRuntime>((resolve) => {
				back = resolve;
			});
		},
	});
	try {
		manager.spawn({ task: "short", options: { name: "sleepy" } });
		await passive;
		expect(manager.list()[0]).toMatchObject({ status: "idle", residency: "passive" });
		expect(manager.isIdle()).toBe(true);

		manager.receiver("sleepy")?.mailbox?.accept({ from_role: "parent", from_name: "parent", text: "wake up" });
		await relaunch;
		expect(launches[1]?.resumeFile).toBe("/s/sub/first.jsonl");
		// Coming back counts as work.
		expect(manager.isIdle()).toBe(false);

		const deleted = manager.delete("sleepy");
		back(runtime("second", disposed));
		expect(await deleted).toEqual({ name: "sleepy", status: "idle" });
		expect(disposed).toEqual(["first", "second"]);
		expect(events.filter((event) => event.type === "child_residency").map((event) => event.residency)).toEqual([
			"passive",
		]);
		expect(manager.names()).toEqual([]);
		expect(manager.isIdle()).toBe(true);
	} finally {
		await manager.shutdown();
	}
});
