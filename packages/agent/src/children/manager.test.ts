import { expect, it } from "vitest";
import type { HiddenMessage } from "../extensions/index.js";
import { ChildManager } from "./manager.js";
import type { ChildRuntime } from "./types.js";

it("a child deleted while starting stays tracked (busy) until it has settled and sent its cancelled notice", async () => {
	const delivered: HiddenMessage[] = [];
	let up: (runtime: ChildRuntime) => void = () => {};
	let disposed = false;
	const manager = new ChildManager({
		parent: {
			sessionFile: "/s.jsonl",
			artifactDir: "/s",
			leafId: () => null,
			appendCustom: () => {},
			deliver: (message) => delivered.push(message),
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
	await new Promise((resolve) => setTimeout(resolve, 10));
	expect(disposed).toBe(true);
	expect(delivered.map((message) => (message.details as { kind: string }).kind)).toEqual(["cancelled"]);
	expect(manager.isIdle()).toBe(true);
});
