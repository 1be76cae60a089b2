/**
 * A worker hosts one session tree (the root session, its sub-agents and their kernels) for the
 * daemon. Clients connect to its socket, present the token, and are views: they receive every
 * session event as it happens and send prompts, steering, interrupts and slash commands. A client
 * leaving (`detach`, or its socket closing) never touches the session. A worker owned by a
 * one-shot client stops as soon as that client goes (its run with it); a resident one stops after
 * being idle with nobody attached and nothing scheduled for the eviction time.
 */
import { existsSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { SCHEDULES_EXTENSION_NAME, schedulesExtension } from "../builtin/schedules/index.js";
import { UserError } from "../errors.js";
import { type LinkRunEnd, LocalLink, type SessionEvent, userMessage } from "../link/index.js";
import { describeActiveGoal } from "../modes/long-running.js";
import { captureConsole } from "../modes/session-lines.js";
import { formatDuration, type ScheduleJob, Scheduler, scheduleHostHandlers } from "../schedules/index.js";
import type { StartedSession } from "../startup/index.js";
import { WORKER_REFUSALS } from "./handshake.js";
import { type LineConnection, type RequestOf, replyError, type WorkerPush, type WorkerWelcome } from "./protocol.js";
import { QUEUE_FILE, QueueFile } from "./queue-file.js";
import { type WorkerRequests, workerRequests } from "./requests.js";
import { type Handlers, serve } from "./serve.js";
import { type DaemonPaths, workerDir, workerSocket, writeSessionRecord } from "./state.js";

export interface WorkerTimings {
	/** How long a one-shot worker waits for its client to connect after a start or a crash restart (30 s). */
	oneShotGraceMs: number;
	/** How long a resident worker stays with no client, no heartbeat, no schedule and no work (90 min). */
	idleEvictMs: number;
}

/** Why a one-shot run stopped when its client went away while it ran (`prime-agent agents` shows it). */
export const ONE_SHOT_CLIENT_GONE_MID_RUN =
	"its one-shot client went away during the run (killed or crashed), so the run was stopped";

export const DEFAULT_WORKER_TIMINGS: WorkerTimings = { oneShotGraceMs: 30_000, idleEvictMs: 90 * 60_000 };

/** The timings, from the environment (tests shorten them) or the defaults. */
export function workerTimings(env: NodeJS.ProcessEnv): WorkerTimings {
	const read = (name: string, fallback: number) => {
		const value = Number(env[name]);
		return env[name] !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
	};
	return {
		oneShotGraceMs: read("PRIME_AGENT_ONESHOT_GRACE_MS", DEFAULT_WORKER_TIMINGS.oneShotGraceMs),
		idleEvictMs: read("PRIME_AGENT_IDLE_EVICT_MS", DEFAULT_WORKER_TIMINGS.idleEvictMs),
	};
}

/** A view that said `hello`. */
interface Client {
	connection: LineConnection;
	oneShot: boolean;
	/** It answers questions (a cell that ignored the interrupt): the terminal UI. */
	answers: boolean;
}

export interface WorkerOptions {
	key: string;
	paths: DaemonPaths;
	token: string;
	oneShot: boolean;
	started: StartedSession;
	timings: WorkerTimings;
}

export class Worker {
	private readonly clients = new Set<Client>();
	private server: Server | undefined;
	private readonly scheduler: Scheduler;
	private lastActivity = Date.now();
	private detachedAt: string | null | undefined;
	private graceTimer: NodeJS.Timeout | undefined;
	private evictTimer: NodeJS.Timeout | undefined;
	/** The client whose prompt runs now (none for a schedule, a woken turn, or no run). */
	private runFor: Client | undefined;
	/** A view attached to this one-shot run's worker: it stays after the run, as a resident one. */
	private adopted = false;
	/** What the views drive: the session as an in-process view would drive it. */
	private readonly link: LocalLink;
	/** The session's queue on disk, for the worker started in this one's place after a crash. */
	private readonly queueFile: QueueFile;
	/** Written to `queueFile` until a stop drops what is queued. */
	private keepQueue = true;
	private stopping: Promise<void> | undefined;
	private recordTimer: NodeJS.Timeout | undefined;
	private readonly stopSession: () => void;
	/** Resolves once the worker has stopped (its session disposed). */
	readonly stopped: Promise<string>;
	private resolveStopped!: (reason: string) => void;

	constructor(private readonly options: WorkerOptions) {
		const { started } = options;
		this.stopped = new Promise((resolve) => {
			this.resolveStopped = resolve;
		});
		this.scheduler = new Scheduler({
			// In the tree's folder, not the session's: a session with no answer yet has no folder of its own.
			file: join(workerDir(options.paths, options.key), "schedules.json"),
			deliver: (job) => this.deliverScheduled(job),
		});
		this.scheduler.onChange(() => this.writeRecord());
		this.link = new LocalLink(started);
		this.stopSession = this.link.subscribe((event) => this.onLinkEvent(event));
		this.queueFile = new QueueFile(join(workerDir(options.paths, options.key), QUEUE_FILE), (line) =>
			process.stderr.write(`${line}\n`),
		);
		this.link.onQueueChange((queued) => {
			if (this.keepQueue) this.queueFile.write(queued);
		});
	}

	/** Load `/heartbeat` and `/schedule`, answer the kernel's heartbeat requests, listen, start the timers. */
	async start(): Promise<void> {
		const { started } = this.options;
		await started.extensions.load(SCHEDULES_EXTENSION_NAME, schedulesExtension(this.scheduler));
		for (const [type, handler] of Object.entries(scheduleHostHandlers(this.scheduler)))
			started.kernel.onHostRequest(type, handler);
		const socket = workerSocket(this.options.paths, this.options.key);
		if (existsSync(socket)) rmSync(socket);
		this.server = createServer((socket) => this.accept(socket));
		await new Promise<void>((resolve, reject) => {
			this.server?.once("error", reject);
			this.server?.listen(socket, () => resolve());
		});
		this.scheduler.start();
		this.captureConsole();
		try {
			// The first record tells the supervisor the session serves: without it (a full disk) it never would.
			this.writeRecordFile({});
		} catch (error) {
			this.scheduler.stop();
			this.server?.close();
			throw error;
		}
		// Serving from here on: what a crashed worker of this agent left queued runs first.
		this.requeue();
		this.armIdle();
		// Its client connects right after the start; a worker restarted after a crash may have none left.
		if (this.options.oneShot) this.armGrace();
		// The agent home was removed under it: there is no record, socket or token left to serve by.
		const home = setInterval(() => {
			if (!existsSync(socket)) void this.stop("its daemon folder was removed");
		}, 2000);
		home.unref();
		void this.stopped.then(() => clearInterval(home));
	}

	/** Stop: tell clients, save the kernel's variables, close the session. Idempotent. */
	stop(reason: string, restart = false): Promise<void> {
		if (this.stopping) return this.stopping;
		this.stopping = (async () => {
			this.dropQueue(reason);
			this.writeRecord({ stoppedAt: new Date().toISOString(), stopReason: reason });
			this.scheduler.stop();
			clearTimeout(this.graceTimer);
			clearTimeout(this.evictTimer);
			clearTimeout(this.recordTimer);
			this.push({ type: "bye", reason, ...(restart ? { restart } : {}) });
			this.server?.close();
			this.stopSession();
			await this.link.close();
			await this.options.started.dispose();
			// Clients waiting on `shutdown` see the connection close once the session is saved.
			for (const client of this.clients) client.connection.close();
			this.resolveStopped(reason);
		})();
		return this.stopping;
	}

	/**
	 * Queue again what the queue file holds: left by a worker of this agent that crashed (a clean stop
	 * removes it), in the order it was queued. Each item is a prompt of its own, queued behind the
	 * others: steering or a follow-up was for the turn the crash cut, which is over, so it is now
	 * what the user asked next. The item whose run was under way at the crash had left the queue
	 * when its run started, so a prompt that crashes the worker is not run again.
	 */
	private requeue(): void {
		const items = this.queueFile.read();
		for (const { text } of items) void this.runPrompt(undefined, 0, text, false);
		if (items.length > 0)
			process.stderr.write(`Queued again ${inputs(items.length)} left by the worker that crashed.\n`);
		// An ignored file goes (the items above wrote the queue already).
		else this.queueFile.write([]);
	}

	/**
	 * A stop drops what is queued, as closing the session in process does (nothing queued runs
	 * after a shutdown, an eviction or a one-shot run's end): its file goes first, so that no later
	 * start runs it. The log says how much was dropped.
	 */
	private dropQueue(reason: string): void {
		this.keepQueue = false;
		this.queueFile.write([]);
		const dropped = this.link.status().queued.length;
		if (dropped > 0)
			process.stderr.write(`Dropped what was queued (${inputs(dropped)}): the worker stopped (${reason}).\n`);
	}

	/**
	 * What code in the worker prints with `console` (an extension's command or hook) still goes to
	 * the worker's log, and to every view as a `console` event: the user sees it as they would in
	 * process.
	 */
	private captureConsole(): void {
		const release = captureConsole(
			(text, level) => this.push({ type: "event", event: { type: "console", level, text } }),
			true,
		);
		void this.stopped.then(release);
	}

	private accept(socket: Socket): void {
		serve(socket, {
			token: this.options.token,
			refusals: WORKER_REFUSALS,
			parser: workerRequests,
			welcome: (hello, connection) => this.welcomeClient(hello, connection),
			handlers: this.handlers,
			received: () => this.touch(),
			failed: (id, error) =>
				replyError(id, error.message, error instanceof UserError ? error.hint : "Check the command and try again."),
			closed: (client) => this.leave(client),
		});
	}

	/** A view said `hello`: it is one of this worker's clients from now on. */
	private welcomeClient(
		hello: RequestOf<WorkerRequests, "hello">,
		connection: LineConnection,
	): { client: Client; data: WorkerWelcome } {
		const client: Client = { connection, oneShot: hello.oneShot === true, answers: hello.answers === true };
		// A view attached to a one-shot run's worker (`attach`): the worker is resident from now on.
		if (!client.oneShot && this.ownedByOneShot) {
			this.adopted = true;
			this.armIdle();
		}
		this.clients.add(client);
		clearTimeout(this.graceTimer);
		this.touch();
		this.writeRecord();
		return { client, data: this.welcome() };
	}

	private leave(client: Client): void {
		if (!this.clients.delete(client)) return;
		if (this.clients.size === 0) this.detachedAt = this.options.started.session.leafId;
		// Nobody is left to answer a question: the kernel is restarted, as with no view at all.
		if (this.link.asking && ![...this.clients].some((other) => other.answers)) this.link.answerStillBusy("restart");
		this.touch();
		this.writeRecord();
		// The one-shot client is gone before its run's end (killed, crashed, `| head -1`, a third Ctrl-C):
		// nobody reads the run any more. In process the run would have ended with it, so here too: the
		// run stops now, with its kernels, sub-agents and their processes, not after a grace period.
		if (this.clients.size === 0 && this.ownedByOneShot)
			void this.stop(this.busy ? ONE_SHOT_CLIENT_GONE_MID_RUN : "its one-shot client disconnected");
	}

	/**
	 * A one-shot worker that no client has reached yet (just started, or restarted after a crash)
	 * stops after the grace period unless its client comes.
	 */
	private armGrace(): void {
		clearTimeout(this.graceTimer);
		this.graceTimer = setTimeout(
			() => void this.stop("its one-shot client disconnected"),
			this.options.timings.oneShotGraceMs,
		);
	}

	/** What this worker answers, one handler per request kind (see `WorkerRequests`); `from`: the view that asked. */
	private readonly handlers: Handlers<WorkerRequests, Client> = {
		prompt: ({ id, text, settle }, from) => {
			void this.runPrompt(from, id, text, settle === true);
			return { queued: true };
		},
		steer: ({ id, text }, from) => this.deliver(from, id, text, "steer"),
		follow_up: ({ id, text }, from) => this.deliver(from, id, text, "follow_up"),
		queue: ({ text }) => {
			// Runs after the running turn whether or not the view that queued it is still attached.
			void this.runPrompt(undefined, 0, text, false);
			return { queued: true };
		},
		interrupt: async ({ stop }) => ({ action: await this.link.interrupt(stop === true) }),
		status: () => this.link.status(),
		history: () => this.link.history(),
		tree: () => this.link.tree(),
		branch: async ({ leafId }) => {
			await this.link.branch(leafId);
		},
		read_archive: ({ archiveId, start, end }) => this.link.readArchive(archiveId, start, end),
		check_model: ({ ref }) => this.link.checkModel(ref),
		still_busy_answer: ({ choice, question }) => {
			this.link.answerStillBusy(choice, question);
		},
		detach: (_request, from) => {
			// Only this view goes; the session, its queue and the worker are untouched.
			this.leave(from);
		},
		schedule_add: ({ when, text, delivery }) => this.scheduler.add(when, text, delivery ?? "follow_up"),
		schedule_list: () => this.scheduler.list(),
		schedule_remove: ({ scheduleId }) => {
			const job = this.scheduler.remove(scheduleId);
			if (!job)
				throw new UserError(
					`No schedule ${scheduleId} in this session.`,
					"List them with `prime-agent schedule list`.",
				);
			return job;
		},
		shutdown: async ({ reason, restart }, from) => {
			// A one-shot client sent to a worker that serves others too (a resident one, or another run of
			// the same session) only leaves: the worker stops when its last one-shot client has gone.
			if (from.oneShot && (!this.ownedByOneShot || this.clients.size > 1)) {
				this.leave(from);
				return;
			}
			await this.stop(from.oneShot ? "its one-shot run ended" : (reason ?? "shut down by a client"), restart === true);
		},
		release: async (_request, from) => {
			// A view moves to another session: the worker stays for other views and for work it has.
			this.leave(from);
			const stopping =
				this.clients.size === 0 &&
				!this.busy &&
				this.scheduler.heartbeat === undefined &&
				this.scheduler.scheduleCount === 0;
			if (stopping) await this.stop("its last view moved to another session");
			return { stopping };
		},
	};

	/** `steer` or `follow_up`: held by the session (every view lists it) until the turn reads it; a prompt when nothing runs. */
	private deliver<Kind extends "steer" | "follow_up">(
		from: Client,
		id: number,
		text: string,
		kind: Kind,
	): { delivered: "prompt" | Kind } {
		if (!this.options.started.agentSession.running) {
			void this.runPrompt(from, id, text, false);
			return { delivered: "prompt" };
		}
		this.link.queueMessage(text, kind);
		return { delivered: kind };
	}

	/**
	 * Prompts run one after another (the session's queue lists those waiting); each ends with a
	 * `run_end` to every client (with the request's id to the client that sent it, 0 to the others).
	 */
	private runPrompt(requester: Client | undefined, id: number, text: string, settle: boolean): Promise<unknown> {
		return this.link.inTurn(text, async () => {
			this.runFor = requester;
			this.writeRecord();
			try {
				this.pushRunEnd(requester, id, await this.link.run(text, { settle }));
			} finally {
				this.runFor = undefined;
				this.touch();
				this.writeRecord();
				// Its one-shot client went during the run: nobody waits for more.
				if (this.ownedByOneShot && this.clients.size === 0 && !this.busy)
					void this.stop("its one-shot client disconnected");
			}
		});
	}

	/** A schedule or the heartbeat fired: into the running turn, queued for the next, or a turn of its own. */
	private deliverScheduled(job: ScheduleJob): void {
		const { agentSession } = this.options.started;
		const label = job.kind === "heartbeat" ? "[heartbeat]" : `[schedule ${job.id}]`;
		const text = `${label} ${job.text}`;
		this.push({ type: "event", event: { type: "schedule_fired", id: job.id, kind: job.kind, text: job.text } });
		if (agentSession.running) {
			if (job.delivery === "steer") agentSession.agent.steer(userMessage(text));
			else agentSession.agent.followUp(userMessage(text));
			return;
		}
		void this.runPrompt(undefined, 0, text, false);
	}

	private welcome(): WorkerWelcome {
		const { started, key } = this.options;
		// An open goal is named as print mode names it when it starts.
		const goal = describeActiveGoal(started);
		return {
			key,
			session: {
				id: started.session.id,
				path: started.session.path,
				cwd: started.session.cwd,
				persisted: started.session.persisted,
			},
			model: `${started.model.provider}/${started.model.id}`,
			resumed: started.resumed,
			notices: [...started.notices, ...(goal ? [goal] : [])],
			running: this.busy,
			status: this.link.status(),
			detachedAt: this.detachedAt,
		};
	}

	/** Stopped when its one-shot client is done (and no view has attached since). */
	private get ownedByOneShot(): boolean {
		return this.options.oneShot && !this.adopted;
	}

	private get busy(): boolean {
		const { agentSession, children, kernel } = this.options.started;
		// A cell left running after an interrupt is work too (`status` says so; the worker is not evicted under it).
		return !agentSession.isIdle() || !children.isIdle() || kernel.busy;
	}

	private push(message: WorkerPush): void {
		for (const client of this.clients) client.connection.send(message);
	}

	/** The state after the run travels with its end, so a view never sees the run over but the session working. */
	private pushRunEnd(requester: Client | undefined, id: number, end: LinkRunEnd): void {
		const state = this.link.status();
		for (const client of this.clients)
			client.connection.send({ type: "run_end", id: client === requester ? id : 0, end, state } satisfies WorkerPush);
	}

	private pushStatus(): void {
		if (this.clients.size > 0) this.push({ type: "status", status: this.link.status() });
	}

	/** What the session says goes to every view; questions only to views that answer them. */
	private onLinkEvent(event: SessionEvent): void {
		this.touch();
		switch (event.type) {
			case "status":
				this.pushStatus();
				return;
			case "still_busy":
				if ([...this.clients].some((client) => client.answers)) {
					for (const client of this.clients)
						if (client.answers) client.connection.send({ type: "still_busy", question: event.question });
				} else this.link.answerStillBusy("restart");
				return;
			case "run_end": {
				// A turn the session started itself (a sub-agent's notice woke it).
				this.writeRecord();
				const { type: _, ...end } = event;
				this.pushRunEnd(undefined, 0, end);
				return;
			}
			default:
				// Events of a run another client asked for are marked, so print and JSON views skip them.
				for (const client of this.clients)
					client.connection.send({
						type: "event",
						event,
						...(this.runFor && client !== this.runFor ? { own: false } : {}),
					});
		}
	}

	private touch(): void {
		this.lastActivity = Date.now();
		// Activity is written at most once a second; state changes are written at once.
		if (!this.recordTimer)
			this.recordTimer = setTimeout(() => {
				this.recordTimer = undefined;
				this.writeRecord();
			}, 1000);
	}

	/** A resident worker nobody uses, with nothing scheduled and nothing running, stops (it is saved). */
	private armIdle(): void {
		if (this.ownedByOneShot || this.evictTimer) return;
		const { idleEvictMs } = this.options.timings;
		const check = () => {
			const idleFor = Date.now() - this.lastActivity;
			const resident =
				this.clients.size > 0 ||
				this.busy ||
				this.scheduler.heartbeat !== undefined ||
				this.scheduler.scheduleCount > 0;
			if (!resident && idleFor >= idleEvictMs) {
				void this.stop(`idle for ${formatDuration(idleEvictMs)} with no client, heartbeat, schedule or work`);
				return;
			}
			this.evictTimer = setTimeout(check, Math.max(50, Math.min(idleEvictMs - idleFor, idleEvictMs / 4, 60_000)));
			this.evictTimer.unref?.();
		};
		this.evictTimer = setTimeout(check, Math.max(50, Math.min(idleEvictMs, 60_000)));
	}

	/**
	 * Writes what `agents` shows of this worker. A record that cannot be written (a full disk) is
	 * reported in the worker's log and otherwise passed over: it must never stop the worker from
	 * serving, nor from stopping (a stop that failed here left the worker running for good).
	 */
	private writeRecord(extra: { stoppedAt?: string; stopReason?: string } = {}): void {
		try {
			this.writeRecordFile(extra);
		} catch (error) {
			process.stderr.write(`Could not write this worker's record: ${(error as Error).message}\n`);
		}
	}

	private writeRecordFile(extra: { stoppedAt?: string; stopReason?: string }): void {
		if (this.stopping && !extra.stoppedAt) return;
		if (!existsSync(workerDir(this.options.paths, this.options.key))) return;
		const { started } = this.options;
		const beat = this.scheduler.heartbeat;
		writeSessionRecord(this.options.paths, this.options.key, {
			pid: process.pid,
			session: { id: started.session.id, path: started.session.path, cwd: started.session.cwd },
			busy: this.busy,
			lastActivity: new Date(this.lastActivity).toISOString(),
			clients: this.clients.size,
			detachedAt: this.detachedAt,
			...(beat && beat.when.kind === "every" ? { heartbeat: `${Math.round(beat.when.ms / 1000)}s` } : {}),
			schedules: this.scheduler.scheduleCount,
			...extra,
		});
	}
}

function inputs(count: number): string {
	return `${count} input${count === 1 ? "" : "s"}`;
}
