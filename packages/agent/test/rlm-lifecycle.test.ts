import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { expect, it } from "vitest";
import { runPrintMode } from "../src/modes/index.js";
import { allText, lastToolResult, scriptAgents } from "./agent-scripts.js";
import { useFauxSessions } from "./faux-session.js";

const sessions = useFauxSessions({ provider: "fauxl", models: [{ id: "m" }] });

function cell(code: string) {
	return fauxAssistantMessage(fauxToolCall("ipython", { code }));
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

function sink(): { stream: Writable; text: () => string } {
	let text = "";
	const stream = new Writable({
		write(chunk, _encoding, done) {
			text += String(chunk);
			done();
		},
	});
	return { stream, text: () => text };
}

function notices(context: Context | undefined): string[] {
	return allText(context)
		.split("\n---\n")
		.filter((text) => text.startsWith("[rlm notice:"));
}

it("a failing child and one cancelled while starting each send their notice; a running child deleted leaves no kernel", async () => {
	const started = await sessions.start();
	const pidFile = join(sessions.world.project, "sleeper.pid");
	const seen = scriptAgents(sessions, {
		root: [
			cell(
				[
					'await rlm("fail on purpose", name="breaker")',
					'await rlm("never starts", name="gone")',
					'print(await rlm.delete_subagent("gone"))',
					'await rlm("sleep a long time", name="sleeper")',
					"import os, asyncio",
					`while not os.path.exists(${JSON.stringify(pidFile)}): await asyncio.sleep(0.05)`,
					'print(await rlm.delete_subagent("sleeper"))',
					"print(await rlm.list_subagents() and [c['name'] for c in await rlm.list_subagents()])",
				].join("\n"),
			),
			fauxAssistantMessage("Waiting for the breaker."),
			fauxAssistantMessage("The breaker failed; noted."),
		],
		breaker: [
			() => {
				throw new Error("provider exploded");
			},
		],
		sleeper: [cell(`import os, time\nopen(${JSON.stringify(pidFile)}, "w").write(str(os.getpid()))\ntime.sleep(120)`)],
	});
	await started.agentSession.prompt("spawn and cancel");
	await started.whenSettled();
	const printed = lastToolResult(seen.get("root")?.[1]).trim().split("\n");
	expect(printed).toEqual([
		"{'name': 'gone', 'was': 'starting'}",
		"{'name': 'sleeper', 'was': 'running'}",
		"['breaker']",
	]);
	// The sleeper's kernel is gone (its cell was interrupted, then its session shut down).
	const sleeperPid = Number(readFileSync(pidFile, "utf8"));
	expect(alive(sleeperPid)).toBe(false);
	const all = started.session
		.branch()
		.filter((entry) => entry.type === "custom_message" && entry.customType === "rlm_notice")
		.map((entry) => (entry.type === "custom_message" ? String(entry.content) : ""));
	expect(all.map((text) => /^\[rlm notice: (\w+)\] Sub-agent "([^"]+)"/.exec(text)?.slice(1).join(" ")).sort()).toEqual(
		["cancelled gone", "cancelled sleeper", "failed breaker"],
	);
	expect(all.find((text) => text.includes('"gone"'))).toMatch(
		/was cancelled \(deleted by rlm\.delete_subagent\)\. It wrote no text\.$/,
	);
	expect(all.find((text) => text.includes('"breaker"'))).toMatch(
		/failed: provider exploded\. It wrote no text\. Spawn it again/,
	);
	// Notices reached the model: the cancellations steered the running turn, the failure woke it.
	const contexts = seen.get("root") ?? [];
	expect(notices(contexts.at(-1))).toHaveLength(3);
	expect(started.children.list().map((child) => [child.name, child.status])).toEqual([["breaker", "failed"]]);
});

it("-p ends only once every child settled and the turn its notice started has ended", async () => {
	const started = await sessions.start();
	const seen = scriptAgents(sessions, {
		root: [
			cell('await rlm("write a haiku", name="poet")'),
			fauxAssistantMessage("Spawned the poet; ending my turn."),
			fauxAssistantMessage("The poet finished: here is its haiku."),
		],
		poet: [cell("import time\ntime.sleep(1)"), fauxAssistantMessage("old pond / frog jumps in / splash")],
	});
	const out = sink();
	const err = sink();
	const code = await runPrintMode(started, "spawn a poet", { out: out.stream, err: err.stream });
	expect(code).toBe(0);
	expect(out.text()).toContain("The poet finished: here is its haiku.");
	expect(err.text()).toContain('Sub-agent "poet" (sub-');
	expect(err.text()).toContain('Sub-agent "poet": completed_without_reply notice sent to its parent');
	expect(notices(seen.get("root")?.at(-1))).toHaveLength(1);
	expect(started.agentSession.busy).toBe(false);
	expect(started.children.busy).toBe(false);
	expect(existsSync(started.children.list()[0]?.session_dir as string)).toBe(true);
});
