import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { eventually } from "prime-agent-test-support/daemon-world";
import { useFauxSessions, wireText } from "prime-agent-test-support/faux-session";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connectWorker } from "../src/daemon/client.js";
import { QUEUE_FILE } from "../src/daemon/queue-file.js";
import { daemonPaths, ensureDaemonDir, workerDir, workerSocket } from "../src/daemon/state.js";
import { Worker } from "../src/daemon/worker.js";
import { WorkerLink } from "../src/daemon/worker-link.js";
import type { SessionEvent } from "../src/link/index.js";

const TOKEN = "a".repeat(64);
const KEY = "00000001";
const sessions = useFauxSessions();
const workers: Worker[] = [];
const links: WorkerLink[] = [];
afterEach(async () => {
	for (const link of links.splice(0)) await link.close();
	for (const worker of workers.splice(0)) await worker.stop("the test ended");
	vi.restoreAllMocks();
});

/** What the worker writes to its log (its stderr) from now on. */
function workerLog(): string[] {
	const lines: string[] = [];
	const write = process.stderr.write.bind(process.stderr);
	vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
		lines.push(String(chunk));
		return (write as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean)(chunk, ...rest);
	});
	return lines;
}

function queueFile(): string {
	return join(workerDir(daemonPaths(sessions.world.home), KEY), QUEUE_FILE);
}

/** A worker of agent `KEY` on a new session, in this process, and a view of it. */
async function startWorker(): Promise<{ worker: Worker; link: WorkerLink }> {
	const started = await sessions.start();
	const paths = daemonPaths(sessions.world.home);
	ensureDaemonDir(paths);
	mkdirSync(workerDir(paths, KEY), { recursive: true });
	const worker = new Worker({
		key: KEY,
		paths,
		token: TOKEN,
		oneShot: false,
		started,
		timings: { oneShotGraceMs: 60_000, idleEvictMs: 60 * 60_000 },
	});
	workers.push(worker);
	await worker.start();
	const context = { paths, token: TOKEN, env: sessions.world.env };
	const { client, welcome } = await connectWorker(context, workerSocket(paths, KEY), false);
	const link = new WorkerLink(client, welcome);
	links.push(link);
	return { worker, link };
}

/** A cell that runs until the test writes `release` into the project. */
function waitingCell(project: string): string {
	const release = JSON.stringify(join(project, "release"));
	return `import os, time\nprint('waiting', flush=True)\nwhile not os.path.exists(${release}): time.sleep(0.05)`;
}

describe("a worker's queue on disk", () => {
	it("a worker started where one crashed queues what it left again, as prompts, in order, before any view", async () => {
		const asked: string[] = [];
		const answer = (text: string) => (context: Context) => {
			asked.push(wireText(context.messages.at(-1) as Context["messages"][number]));
			return fauxAssistantMessage(text);
		};
		sessions.faux.setResponses([answer("Wrote it up."), answer("Listed.")]);
		mkdirSync(workerDir(daemonPaths(sessions.world.home), KEY), { recursive: true });
		writeFileSync(
			queueFile(),
			JSON.stringify({
				version: 1,
				items: [
					{ kind: "follow_up", text: "then write it up" },
					{ kind: "prompt", text: "list what changed" },
				],
			}),
		);
		const log = workerLog();
		const { link } = await startWorker();
		expect(log).toEqual(["Queued again 2 inputs left by the worker that crashed.\n"]);
		// The first was running before the view came: the second waits behind it.
		expect(link.status().queued).toEqual([{ kind: "prompt", text: "list what changed" }]);
		await eventually("both to run", () => asked.length === 2 && !link.status().running);
		expect(asked).toEqual(["then write it up", "list what changed"]);
		expect(link.status().queued).toEqual([]);
		expect(existsSync(queueFile())).toBe(false);
	});

	it("a worker ignores a file it cannot trust, removes it and serves", async () => {
		sessions.faux.setResponses([fauxAssistantMessage("never asked for")]);
		mkdirSync(workerDir(daemonPaths(sessions.world.home), KEY), { recursive: true });
		writeFileSync(queueFile(), '{"version":1,"items":[{"kind":"prompt","text":"a\\u0000b"},{"kind":"prom');
		const log = workerLog();
		const { link } = await startWorker();
		expect(log).toEqual([
			`The queue file ${queueFile()} was ignored (Unterminated string at line 1, column 72); nothing in it runs.\n`,
		]);
		expect(link.status().queued).toEqual([]);
		expect(link.status().running).toBe(false);
		expect(existsSync(queueFile())).toBe(false);
		expect(sessions.faux.getPendingResponseCount()).toBe(1);
	});

	it("a clean stop drops what is queued and leaves no file for the next start", async () => {
		const project = sessions.world.project;
		sessions.faux.setResponses([
			fauxAssistantMessage(fauxToolCall("ipython", { code: waitingCell(project) })),
			fauxAssistantMessage("never asked for"),
		]);
		const { worker, link } = await startWorker();
		const events: SessionEvent[] = [];
		link.subscribe((event) => events.push(event));
		void link.prompt("run the waiting job");
		await eventually("the cell to run", () => events.some((event) => event.type === "tool_execution_update"));
		await link.followUp("then write it up");
		await link.queue("list what changed");
		await eventually("both to be on disk", () => existsSync(queueFile()));
		expect(JSON.parse(readFileSync(queueFile(), "utf8")).items).toEqual([
			{ kind: "follow_up", text: "then write it up" },
			{ kind: "prompt", text: "list what changed" },
		]);
		const log = workerLog();
		await worker.stop("shut down by a test");
		expect(log).toEqual(["Dropped what was queued (2 inputs): the worker stopped (shut down by a test).\n"]);
		expect(existsSync(queueFile())).toBe(false);
		// Started again under the same key: nothing runs.
		const again = await startWorker();
		expect(again.link.status().queued).toEqual([]);
		expect(again.link.status().running).toBe(false);
	});
});
