import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
	type DaemonWorld,
	endDaemonTest,
	eventually,
	heldCell,
	makeDaemonWorld,
	sessionRecords,
} from "prime-agent-test-support/daemon-world";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connectWorker, daemonContext } from "../src/daemon/client.js";
import { QUEUE_FILE } from "../src/daemon/queue-file.js";
import { daemonPaths, workerDir, workerSocket } from "../src/daemon/state.js";
import { WorkerLink } from "../src/daemon/worker-link.js";
import type { QueuedInput, SessionEvent } from "../src/link/index.js";

// Real processes: a supervisor, its worker (killed twice), kernels, and a loopback model.
vi.setConfig({ testTimeout: 240_000 });

let world: DaemonWorld | undefined;
const links: WorkerLink[] = [];
afterEach(async () => {
	for (const link of links.splice(0)) await link.close().catch(() => {});
	await endDaemonTest(world, []);
	world = undefined;
});

const FOLLOW_UP = "then write the results up";
const PROMPT = "and after that, list what changed";

/** The text of the last user message of a chat-completions request. */
function lastUserText(body: Record<string, unknown>): string {
	const users = (body.messages as { role: string; content: unknown }[]).filter((message) => message.role === "user");
	const content = users.at(-1)?.content;
	if (typeof content === "string") return content;
	return (content as { type: string; text?: string }[]).map((part) => part.text ?? "").join("");
}

/** The texts of the user messages a session file holds, in order. */
function userTexts(path: string): string[] {
	return sessionRecords(path)
		.filter((record) => (record.message as { role?: string } | undefined)?.role === "user")
		.map((record) => {
			const content = (record.message as { content: unknown }).content;
			return typeof content === "string"
				? content
				: (content as { text?: string }[]).map((part) => part.text ?? "").join("");
		});
}

describe("what users queued while the agent worked", () => {
	it("survives a worker killed mid-turn: the restarted worker lists it and runs it in order, and never runs again what was running at a crash", async () => {
		world = await makeDaemonWorld([
			{ code: heldCell("first job holding", "first job released") },
			{ code: heldCell("follow-up holding", "follow-up released") },
			{ text: "Listed what changed." },
		]);
		const w = world;
		const paths = daemonPaths(w.home);
		// A resident agent, idle, that the test drives as a view.
		const chat = await w.cli(["--model", "local/coder"], "/exit\n");
		const key = /Detached from agent ([0-9a-f]{8})/.exec(chat.stderr)?.[1] as string;
		expect(key).toMatch(/^[0-9a-f]{8}$/);
		const queueFile = join(workerDir(paths, key), QUEUE_FILE);
		const context = daemonContext(w.env);
		const view = async () => {
			const { client, welcome } = await connectWorker(context, workerSocket(paths, key), false);
			const link = new WorkerLink(client, welcome);
			links.push(link);
			return link;
		};
		/** The agent's worker pid once it serves again after `pid` (the supervisor's restart). */
		const servedBy = (pid?: number) =>
			eventually("the worker to serve", async () => {
				const agent = (await w.agents()).find((info) => info.key === key);
				return agent?.pid && agent.pid !== pid && (agent.state === "running" || agent.state === "idle")
					? agent
					: undefined;
			});
		const onFile = (): QueuedInput[] | undefined =>
			existsSync(queueFile)
				? (JSON.parse(readFileSync(queueFile, "utf8")) as { items: QueuedInput[] }).items
				: undefined;

		const first = await view();
		const events: SessionEvent[] = [];
		first.subscribe((event) => events.push(event));
		void first.prompt("run the first job");
		await eventually("the first job's cell to run", () =>
			events.some((event) => event.type === "tool_execution_update"),
		);
		await first.followUp(FOLLOW_UP);
		await first.queue(PROMPT);
		const queued = [
			{ kind: "follow_up", text: FOLLOW_UP },
			{ kind: "prompt", text: PROMPT },
		];
		await eventually("both to be listed", () => first.status().queued.length === 2);
		expect(first.status().queued).toEqual(queued);
		expect(onFile()).toEqual(queued);

		// Killed mid-turn: the restarted worker queues both again, as prompts. The follow-up runs at
		// once (the model is asked with it), so a view that comes back lists the prompt behind it.
		const before = await servedBy();
		process.kill(before.pid as number, "SIGKILL");
		const restarted = await servedBy(before.pid);
		await eventually("the follow-up to reach the model", () => w.server.requests.length === 2);
		expect(lastUserText(w.server.requests[1] as Record<string, unknown>)).toBe(FOLLOW_UP);
		const second = await view();
		expect(second.status().running).toBe(true);
		expect(second.status().queued).toEqual([{ kind: "prompt", text: PROMPT }]);
		expect(onFile()).toEqual([{ kind: "prompt", text: PROMPT }]);

		// Killed again while the follow-up's cell runs: the follow-up had left the queue when its run
		// started, so only the prompt runs after this restart.
		process.kill(restarted.pid as number, "SIGKILL");
		await servedBy(restarted.pid);
		await eventually("the prompt to reach the model", () => w.server.requests.length === 3);
		expect(lastUserText(w.server.requests[2] as Record<string, unknown>)).toBe(PROMPT);
		const third = await view();
		await eventually("the prompt's run to end", () => !third.status().running);
		expect(w.server.requests).toHaveLength(3);
		expect(third.status().queued).toEqual([]);
		expect(onFile()).toBeUndefined();
		// The session holds each once, in the order they were queued.
		expect(userTexts(restarted.sessionPath as string)).toEqual(["run the first job", FOLLOW_UP, PROMPT]);
		const log = readFileSync(join(workerDir(paths, key), "worker.log"), "utf8");
		expect(log.split("\n").filter((line) => line.startsWith("Queued again"))).toEqual([
			"Queued again 2 inputs left by the worker that crashed.",
			"Queued again 1 input left by the worker that crashed.",
		]);
	});
});
