import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { eventually } from "prime-agent-test-support/daemon-world";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { expect, it } from "vitest";
import type { ChildEvent } from "../src/children/index.js";
import { Session } from "../src/session/index.js";
import { alive, allText, cell, lastToolResult, scriptAgents } from "./agent-scripts.js";

const sessions = useFauxSessions({ provider: "fauxres", models: [{ id: "m" }] });

it("a finished sub-agent is retained, evicted to passive when idle, and a message brings it back with its kernel variables", async () => {
	sessions.newWorld({ PRIME_AGENT_CHILD_EVICT_MS: "1500" });
	const started = await sessions.start();
	const events: ChildEvent[] = [];
	started.onChildEvent((event) => events.push(event));
	const seen = scriptAgents(sessions, {
		root: [
			cell('await rlm("remember 41", name="keeper")'),
			fauxAssistantMessage("Spawned."),
			fauxAssistantMessage("Noted."),
			cell('await agent_message.send("what is x + 1?", receiver_role="child", receiver_name="keeper")'),
			fauxAssistantMessage("Asked."),
			fauxAssistantMessage("Noted again."),
		],
		keeper: [
			cell("import os\nx = 41\nprint(os.getpid())"),
			fauxAssistantMessage("Stored x."),
			cell("print(x + 1)"),
			fauxAssistantMessage("Answered."),
		],
	});
	await started.agentSession.prompt("spawn a keeper");
	await started.whenSettled();
	const [keeper] = started.children.list();
	expect(keeper?.status).toBe("idle");
	const kernelPid = Number(lastToolResult(seen.get("keeper")?.[1]).trim());
	expect(alive(kernelPid)).toBe(true);

	// Idle for the eviction time with nothing to do: passive, its kernel gone, its session kept.
	await eventually("the keeper to become passive", () =>
		events.some((event) => event.type === "child_residency" && event.residency === "passive"),
	);
	expect(started.children.list()[0]?.residency).toBe("passive");
	expect(started.children.hasLiveChildren).toBe(false);
	await eventually("the keeper's kernel to stop", () => !alive(kernelPid), 60_000);

	// A message brings it back from its session file and kernel snapshot: x is still 41.
	await started.agentSession.prompt("ask the keeper");
	await started.whenSettled();
	expect(
		events
			.filter((event) => event.type === "child_residency")
			.map((event) => (event as { residency: string }).residency),
	).toEqual(["passive", "retained"]);
	expect(lastToolResult(seen.get("keeper")?.[3]).trim()).toBe(
		"[Kernel state restored from this session's earlier run. 2 names came back from the saved state: os, x.]\n42",
	);
	const file = started.children.list()[0]?.session_file as string;
	const roles = Session.open(file)
		.branch()
		.filter((entry) => entry.type === "message")
		.map((entry) => (entry.type === "message" ? entry.message.role : ""));
	expect(roles).toEqual(["user", "assistant", "toolResult", "assistant", "assistant", "toolResult", "assistant"]);
	expect(started.children.list()[0]?.residency).toBe("retained");
}, 120_000);

it("a sub-agent's heartbeat keeps it in memory while an idle sibling is evicted, wakes it at each interval, and stops when cleared", async () => {
	sessions.newWorld({ PRIME_AGENT_CHILD_EVICT_MS: "1500" });
	const started = await sessions.start();
	const events: ChildEvent[] = [];
	started.onChildEvent((event) => events.push(event));
	const seen = scriptAgents(sessions, {
		root: [
			cell('await rlm("keep an eye on things", name="beater")\nawait rlm("nothing to do", name="quiet")'),
			fauxAssistantMessage("Spawned."),
			...Array.from({ length: 6 }, () => fauxAssistantMessage("Noted.")),
		],
		beater: [
			cell('print(await rlm_heartbeat("10s", "check in"))'),
			fauxAssistantMessage("Heartbeat set."),
			cell("print(await rlm_heartbeat(None))"),
			fauxAssistantMessage("Heartbeat stopped."),
		],
		quiet: [fauxAssistantMessage("Nothing to do.")],
	});
	await started.agentSession.prompt("spawn them");
	await started.whenSettled();
	expect(lastToolResult(seen.get("beater")?.[1])).toMatch(/^\{'id': '[0-9a-f]+', 'every': '10s', 'next': '[^']+'\}$/);
	const residency = (name: string) => started.children.list().find((child) => child.name === name)?.residency;
	await eventually("the quiet one to be evicted", () => residency("quiet") === "passive");
	expect(residency("beater")).toBe("retained");

	// The heartbeat wakes the beater with a hidden message; in that turn it clears the heartbeat.
	await eventually(
		"the heartbeat to wake the beater",
		() => (seen.get("beater") ?? []).some((context) => allText(context).includes("[heartbeat] check in")),
		30_000,
	);
	await eventually("the beater to be evicted once its heartbeat is cleared", () => residency("beater") === "passive");
	expect(lastToolResult(seen.get("beater")?.[3]).trim()).toBe("{'stopped': True}");
	const beater = started.children.list().find((child) => child.name === "beater");
	const stored = JSON.parse(readFileSync(join(beater?.session_dir as string, "schedules.json"), "utf8"));
	expect(stored).toEqual({ version: 1, jobs: [] });
}, 120_000);
