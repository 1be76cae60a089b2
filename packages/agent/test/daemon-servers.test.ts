import { mkdirSync, watch } from "node:fs";
import { createConnection } from "node:net";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { connectWorker } from "../src/daemon/client.js";
import { DAEMON_PROTOCOL_VERSION, LineConnection } from "../src/daemon/protocol.js";
import { daemonPaths, ensureDaemonDir, workerDir, workerKeys, workerSocket } from "../src/daemon/state.js";
import { Supervisor } from "../src/daemon/supervisor.js";
import { ONE_SHOT_CLIENT_GONE_MID_RUN, Worker } from "../src/daemon/worker.js";
import { WorkerLink } from "../src/daemon/worker-link.js";
import type { SessionEvent } from "../src/link/index.js";

const TOKEN = "a".repeat(64);
const LONG_CELL = "import time\nprint('working', flush=True)\ntime.sleep(120)";

/** A connection that sends raw lines and hands over what comes back, one message at a time. */
interface RawClient {
	line(text: string): void;
	send(message: Record<string, unknown>): void;
	next(): Promise<Record<string, unknown>>;
	/** The next message of `type` (pushes of other types are passed over). */
	nextOf(type: string): Promise<Record<string, unknown>>;
	closed: Promise<void>;
	destroy(): void;
}

async function rawClient(path: string): Promise<RawClient> {
	const socket = createConnection(path);
	await new Promise<void>((resolve, reject) => {
		socket.once("connect", resolve);
		socket.once("error", reject);
	});
	const connection = new LineConnection(socket);
	const queue: Record<string, unknown>[] = [];
	const waiters: ((message: Record<string, unknown>) => void)[] = [];
	connection.onMessage((message) => {
		const waiter = waiters.shift();
		if (waiter) waiter(message);
		else queue.push(message);
	});
	const next = (): Promise<Record<string, unknown>> => {
		const queued = queue.shift();
		return queued ? Promise.resolve(queued) : new Promise((resolve) => waiters.push(resolve));
	};
	return {
		line: (text) => socket.write(`${text}\n`),
		send: (message) => connection.send(message),
		next,
		async nextOf(type) {
			for (;;) {
				const message = await next();
				if (message.type === type) return message;
			}
		},
		closed: connection.closed,
		destroy: () => socket.destroy(),
	};
}

const opened: RawClient[] = [];
async function connect(path: string): Promise<RawClient> {
	const client = await rawClient(path);
	opened.push(client);
	return client;
}

async function hello(path: string, extra: Record<string, unknown> = {}): Promise<RawClient> {
	const client = await connect(path);
	client.send({ type: "hello", id: 1, token: TOKEN, version: DAEMON_PROTOCOL_VERSION, ...extra });
	expect(await client.next()).toMatchObject({ type: "reply", id: 1, ok: true });
	return client;
}

afterEach(() => {
	for (const client of opened.splice(0)) client.destroy();
});

describe("the supervisor's socket", () => {
	let world: TempWorld | undefined;
	let supervisor: Supervisor | undefined;
	afterEach(() => {
		supervisor?.close();
		supervisor = undefined;
		world?.cleanup();
		world = undefined;
	});

	async function startSupervisor(): Promise<{ socket: string; exits: number[] }> {
		world = makeTempWorld();
		const paths = daemonPaths(world.home);
		ensureDaemonDir(paths);
		const exits: number[] = [];
		supervisor = new Supervisor(paths, TOKEN, 60 * 60_000, () => exits.push(1));
		expect(await supervisor.start()).toBe(true);
		return { socket: paths.socket, exits };
	}

	it("refuses a wrong token and a request before hello, and closes", async () => {
		const { socket } = await startSupervisor();
		const wrong = await connect(socket);
		wrong.send({ type: "hello", id: 1, token: "b".repeat(64), version: DAEMON_PROTOCOL_VERSION });
		expect(await wrong.next()).toEqual({
			type: "reply",
			id: 1,
			ok: false,
			message: "Wrong or missing token: this daemon belongs to another user.",
			hint: "Use your own agent home (PRIME_AGENT_DIR).",
		});
		await wrong.closed;
		const bare = await connect(socket);
		bare.send({ type: "list", id: 7 });
		expect(await bare.next()).toMatchObject({ id: 7, ok: false, message: expect.stringMatching(/^Wrong or missing/) });
		await bare.closed;
		const old = await connect(socket);
		old.send({ type: "hello", id: 1, token: TOKEN, version: 0 });
		expect(await old.next()).toMatchObject({
			ok: false,
			message: `The daemon speaks protocol ${DAEMON_PROTOCOL_VERSION}, the client 0.`,
		});
		await old.closed;
	});

	it("answers a malformed line, an unknown kind and a wrong field with an error, and goes on serving", async () => {
		const { socket } = await startSupervisor();
		const client = await hello(socket);
		client.line("{not json");
		expect(await client.next()).toEqual({
			type: "reply",
			id: 0,
			ok: false,
			message: "A line sent to the supervisor is not a JSON object: {not json",
			hint: "Update the client and the daemon to the same version.",
		});
		client.send({ type: "frobnicate", id: 2 });
		expect(await client.next()).toMatchObject({
			id: 2,
			ok: false,
			message: "Unknown request frobnicate to the supervisor.",
		});
		client.send({ type: "stop", id: 3, key: 5 });
		expect(await client.next()).toMatchObject({ id: 3, ok: false, message: "Request stop needs key to be a string." });
		client.send({ type: "start", id: 4, owner: "resident", options: { model: "x" } });
		expect(await client.next()).toMatchObject({
			id: 4,
			ok: false,
			message: "Request start (options) needs cwd to be a string.",
		});
		client.send({ type: "hello", id: 5, token: TOKEN, version: DAEMON_PROTOCOL_VERSION });
		expect(await client.next()).toMatchObject({ id: 5, ok: false, message: "This connection has said hello already." });
		// Still serving, and nothing was started by any of them.
		client.send({ type: "list", id: 6 });
		expect(await client.next()).toEqual({ type: "reply", id: 6, ok: true, data: [] });
	});

	it("a line that is not JSON before hello is answered and the connection closed", async () => {
		const { socket } = await startSupervisor();
		const client = await connect(socket);
		client.line("[1, 2]");
		expect(await client.next()).toMatchObject({
			id: 0,
			ok: false,
			message: expect.stringMatching(/not a JSON object/),
		});
		await client.closed;
	});

	it("finishes a start whose client disconnected mid-request, leaving nothing behind, and serves the next client", async () => {
		const { socket } = await startSupervisor();
		const paths = daemonPaths(world?.home as string);
		const client = await hello(socket);
		// The agent's folder is made before its worker starts: the request is under way when the client goes.
		const underWay = new Promise<void>((resolve) => {
			const watcher = watch(paths.workers, () => {
				watcher.close();
				resolve();
			});
		});
		client.send({ type: "start", id: 2, owner: "oneshot", options: { cwd: world?.project }, env: {} });
		await underWay;
		client.destroy();
		// The worker of this build cannot start from the sources (no worker-main.js): the start fails and its record goes.
		await eventually(() => workerKeys(paths).length === 0);
		const next = await hello(socket);
		next.send({ type: "list", id: 2 });
		expect(await next.next()).toEqual({ type: "reply", id: 2, ok: true, data: [] });
	});

	it("stop_all closes the supervisor and exits once", async () => {
		const { socket, exits } = await startSupervisor();
		const client = await hello(socket);
		client.send({ type: "stop_all", id: 2 });
		expect(await client.next()).toEqual({ type: "reply", id: 2, ok: true });
		await eventually(() => exits.length > 0);
		expect(exits).toEqual([1]);
		supervisor = undefined;
	});
});

describe("a worker's socket", () => {
	const sessions = useFauxSessions();
	const workers: Worker[] = [];
	afterEach(async () => {
		for (const worker of workers.splice(0)) await worker.stop("the test ended");
	});

	async function startWorker(oneShot = false, key = "00000001"): Promise<{ worker: Worker; socket: string }> {
		const started = await sessions.start();
		const paths = daemonPaths(sessions.world.home);
		ensureDaemonDir(paths);
		mkdirSync(workerDir(paths, key), { recursive: true });
		const worker = new Worker({
			key,
			paths,
			token: TOKEN,
			oneShot,
			started,
			timings: { oneShotGraceMs: 60_000, idleEvictMs: 60 * 60_000 },
		});
		workers.push(worker);
		await worker.start();
		return { worker, socket: workerSocket(paths, key) };
	}

	it("refuses a wrong token and another version, and closes", async () => {
		const { socket } = await startWorker();
		const wrong = await connect(socket);
		wrong.send({ type: "hello", id: 1, token: "b".repeat(64), version: DAEMON_PROTOCOL_VERSION });
		expect(await wrong.next()).toMatchObject({
			id: 1,
			ok: false,
			message: "Wrong or missing token: this worker belongs to another user or daemon.",
		});
		await wrong.closed;
		const old = await connect(socket);
		old.send({ type: "hello", id: 1, token: TOKEN, version: 0 });
		expect(await old.next()).toMatchObject({
			ok: false,
			message: `Protocol 0 is not this worker's ${DAEMON_PROTOCOL_VERSION}.`,
		});
		await old.closed;
	});

	it("answers a malformed line, an unknown kind and a wrong field with an error, and goes on serving", async () => {
		const { socket } = await startWorker();
		const client = await hello(socket);
		client.line("not json at all");
		expect(await client.nextOf("reply")).toMatchObject({
			id: 0,
			ok: false,
			message: "A line sent to this worker is not a JSON object: not json at all",
		});
		client.send({ type: "reboot", id: 2 });
		expect(await client.nextOf("reply")).toMatchObject({
			id: 2,
			ok: false,
			message: "Unknown request reboot to this worker.",
		});
		client.send({ type: "read_archive", id: 3, archiveId: "a", start: "0", end: 10 });
		expect(await client.nextOf("reply")).toMatchObject({
			id: 3,
			ok: false,
			message: "Request read_archive needs start to be a number.",
		});
		client.send({ type: "still_busy_answer", id: 4, choice: "maybe" });
		expect(await client.nextOf("reply")).toMatchObject({
			id: 4,
			ok: false,
			message: 'Request still_busy_answer needs choice to be "wait" or "restart".',
		});
		client.send({ type: "schedule_remove", id: 5, scheduleId: "nope" });
		expect(await client.nextOf("reply")).toMatchObject({
			id: 5,
			ok: false,
			message: "No schedule nope in this session.",
			hint: "List them with `prime-agent schedule list`.",
		});
		client.send({ type: "status", id: 6 });
		expect(await client.nextOf("reply")).toMatchObject({ id: 6, ok: true, data: { running: false } });
	});

	it("a one-shot client that disconnects mid-run stops the run and the worker", async () => {
		sessions.faux.setResponses([fauxAssistantMessage(fauxToolCall("ipython", { code: LONG_CELL }))]);
		const { worker } = await startWorker(true);
		const client = await hello(workerSocket(daemonPaths(sessions.world.home), "00000001"), { oneShot: true });
		client.send({ type: "prompt", id: 2, text: "run the long job", settle: true });
		expect(await client.nextOf("reply")).toMatchObject({ id: 2, ok: true, data: { queued: true } });
		// The cell is running (it printed) when the client goes.
		for (;;) {
			const push = await client.nextOf("event");
			if ((push.event as { type: string }).type === "tool_execution_update") break;
		}
		client.destroy();
		expect(await worker.stopped).toBe(ONE_SHOT_CLIENT_GONE_MID_RUN);
	});

	it("a WorkerLink goes from open to stopped when its worker stops, and to left when the view leaves", async () => {
		const { worker, socket } = await startWorker();
		const context = { paths: daemonPaths(sessions.world.home), token: TOKEN, env: sessions.world.env };
		const { client, welcome } = await connectWorker(context, socket, false, true);
		const link = new WorkerLink(client, welcome);
		const events: SessionEvent[] = [];
		link.subscribe((event) => events.push(event));
		expect(link.connection).toBe("open");
		const bye = new Promise<void>((resolve) => link.subscribe((event) => event.type === "bye" && resolve()));
		await worker.stop("shut down by a test");
		await bye;
		expect(link.connection).toBe("stopped");
		expect(events.filter((event) => event.type === "bye")).toEqual([{ type: "bye", reason: "shut down by a test" }]);
		const end = await link.prompt("hello?");
		expect(end.errorMessage).toBe(
			"The agent's worker stopped (shut down by a test). `prime-agent agents` shows its state; `prime-agent attach 00000001` continues the session.",
		);
		await expect(link.history()).rejects.toThrow("The agent's worker stopped (shut down by a test).");
		expect(await link.close()).toBe("");
		expect(link.connection).toBe("left");
	});

	it("a WorkerLink follows its worker through a restart: reconnecting, then open on the new one", async () => {
		const first = await startWorker(false, "00000001");
		const second = await startWorker(false, "00000002");
		const context = { paths: daemonPaths(sessions.world.home), token: TOKEN, env: sessions.world.env };
		const { client, welcome } = await connectWorker(context, first.socket, false, true);
		let asked: boolean | undefined;
		const link = new WorkerLink(client, welcome, {
			reconnect: async (restarting) => {
				asked = restarting;
				return connectWorker(context, second.socket, false, true);
			},
		});
		const seen: string[] = [];
		const reconnected = new Promise<void>((resolve) =>
			link.subscribe((event) => {
				seen.push(event.type);
				if (event.type === "reconnecting") expect(link.connection).toBe("reconnecting");
				if (event.type === "reconnected") resolve();
			}),
		);
		await first.worker.stop("started again on another model", true);
		await reconnected;
		expect(asked).toBe(true);
		expect(seen).toEqual(["reconnecting", "reconnected"]);
		expect(link.connection).toBe("open");
		expect((await link.history()).length).toBe(0);
		expect(await link.close()).toBe(
			"Detached from agent 00000001; it keeps running. `prime-agent attach 00000001` comes back, `prime-agent shutdown 00000001` stops it.",
		);
		expect(link.connection).toBe("left");
	});

	it("a WorkerLink for a one-shot run hears its own run only; a view's link hears every run", async () => {
		sessions.faux.setResponses([fauxAssistantMessage("For the other view."), fauxAssistantMessage("For this run.")]);
		const { socket } = await startWorker();
		const context = { paths: daemonPaths(sessions.world.home), token: TOKEN, env: sessions.world.env };
		const view = await connectWorker(context, socket, false, true);
		const other = new WorkerLink(view.client, view.welcome);
		const oneShot = await connectWorker(context, socket, true);
		const mine = new WorkerLink(oneShot.client, oneShot.welcome, { ownRunsOnly: true });
		const heard = (link: WorkerLink) => {
			const said: string[] = [];
			link.subscribe((event) => {
				if (event.type === "message_end" && event.message.role === "assistant")
					said.push(JSON.stringify(event.message.content));
				if (event.type === "run_end") said.push(`run_end ${event.status}`);
			});
			return said;
		};
		const heardByOther = heard(other);
		const heardByMine = heard(mine);
		expect(await other.prompt("first")).toMatchObject({ status: "ok", exitCode: 0 });
		expect(await mine.prompt("second", { settle: true })).toMatchObject({ status: "ok", exitCode: 0 });
		const text = (answer: string) => JSON.stringify([{ type: "text", text: answer }]);
		expect(heardByMine).toEqual([text("For this run.")]);
		expect(heardByOther).toEqual([text("For the other view."), text("For this run."), "run_end ok"]);
		await mine.close();
		await other.close();
	});
});

async function eventually(check: () => boolean, timeoutMs = 60_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error("the condition did not hold in time");
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
