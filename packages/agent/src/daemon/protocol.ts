/**
 * The daemon's wire protocol: JSON objects, one per line, over a Unix socket in a user-only
 * directory. Every connection opens with `hello` carrying the per-user token; anything else, or a
 * wrong token, is answered with an error and the connection is closed. Requests carry an `id`;
 * their answer is a `reply` with the same `id`. Workers also push `event`, `run_end` and `bye`.
 */
import { createConnection, type Socket } from "node:net";
import type { LinkRunEnd, LinkStatus, SessionEvent } from "../link/index.js";

export const DAEMON_PROTOCOL_VERSION = 1;

/** Who owns a worker: a one-shot client (print, JSON) or a resident session (the line chat, `attach`). */
export type WorkerOwner = "oneshot" | "resident";

/** What a worker is asked to start: the command line's session options (see `StartOptions`). */
export interface WorkerSessionOptions {
	cwd: string;
	model?: string;
	continueLatest?: boolean;
	resume?: string;
	fork?: string;
	at?: string;
	tools?: string[];
	thinkingLevel?: string;
	extensionPaths?: string[];
	goal?: { objective: string; tokens?: string; turns?: string; minutes?: string };
	autonomous?: Record<string, unknown>;
	allowMissingKey?: boolean;
	/** `--trust-project`. */
	trustProject?: boolean;
	/** `--kernel-url` (a URL never holds the token; the worker reads it from its environment). */
	kernelUrl?: string;
}

/** One session tree as `prime-agent agents` shows it. */
export interface AgentInfo {
	/** The worker key (also accepted by `attach`, `shutdown`, `schedule --agent`). */
	key: string;
	state: "starting" | "running" | "idle" | "saved" | "failed";
	pid?: number;
	owner: WorkerOwner;
	cwd: string;
	sessionId?: string;
	sessionPath?: string;
	/** ISO time of the last prompt, event or client command. */
	lastActivity?: string;
	clients: number;
	crashes: number;
	/** Why the tree was marked failed. */
	failedReason?: string;
	/** A saved tree whose worker stopped on purpose: why (its run ended, its client went, eviction, shutdown). */
	stopReason?: string;
	heartbeat?: string;
	schedules: number;
}

/** An agent to start again under its key, possibly on another model or at another entry. */
export interface AgentAgain {
	key: string;
	env?: Record<string, string>;
	changes?: { model?: string; at?: string };
}

/** Client → supervisor. */
export type SupervisorRequest =
	| { type: "hello"; id: number; token: string; version: number }
	| { type: "start"; id: number; options: WorkerSessionOptions; owner: WorkerOwner; env: Record<string, string> }
	/** Start a saved agent again (`changes`: on another model, at an entry: `/model`); a live one is just named. */
	| ({ type: "resume"; id: number } & AgentAgain)
	/** Stop a live agent and start it again under its key with `changes` (`/model`); its views follow it. */
	| ({ type: "restart"; id: number } & AgentAgain)
	| { type: "list"; id: number }
	| { type: "status"; id: number }
	| { type: "stop"; id: number; key: string; force: boolean }
	| { type: "stop_all"; id: number; force: boolean };

/** Client → worker. */
export type WorkerRequest =
	/** `answers`: the view answers questions (`still_busy`), as the terminal UI does. */
	| { type: "hello"; id: number; token: string; version: number; oneShot?: boolean; answers?: boolean }
	/** Run a prompt or slash command; `run_end` with the same id tells how it ended. */
	| { type: "prompt"; id: number; text: string; settle?: boolean }
	/** Into the running turn (as a user message), or a prompt when nothing runs. The worker holds it until read. */
	| { type: "steer"; id: number; text: string }
	/** Queued for the next turn, or a prompt when nothing runs. The worker holds it until read. */
	| { type: "follow_up"; id: number; text: string }
	/**
	 * A prompt or slash command run once the runs before it have ended, whether or not this client is
	 * still attached; every client gets its `run_end` with id 0.
	 */
	| { type: "queue"; id: number; text: string }
	/** Ctrl-C: the running cell first, then the run; `stop`: the run at once (SIGTERM to a view). */
	| { type: "interrupt"; id: number; stop?: boolean }
	| { type: "detach"; id: number }
	| { type: "schedule_add"; id: number; when: string; text: string; delivery?: "steer" | "follow_up" }
	| { type: "heartbeat"; id: number; args: string }
	| { type: "schedule_list"; id: number }
	| { type: "schedule_remove"; id: number; scheduleId: string }
	/** `restart`: it is started again at once (another model); views follow it instead of ending. */
	| { type: "shutdown"; id: number; reason?: string; restart?: boolean }
	/** What a `SessionLink` asks (see `link/session-link.ts`): the state, the conversation, the tree. */
	| { type: "status"; id: number }
	| { type: "history"; id: number }
	| { type: "tree"; id: number }
	| { type: "branch"; id: number; leafId: string | null }
	| { type: "read_archive"; id: number; archiveId: string; start: number; end: number }
	| { type: "check_model"; id: number; ref: string }
	| { type: "still_busy_answer"; id: number; choice: "wait" | "restart"; question?: number }
	/** Leave for another session: the worker stops when this was its only view and it has nothing to do. */
	| { type: "release"; id: number };

/** What a worker says about its session on `hello`. */
export interface WorkerWelcome {
	key: string;
	session: { id: string; path: string; cwd: string; persisted: boolean };
	model: string;
	resumed: boolean;
	notices: string[];
	running: boolean;
	/** The session's state (what a status line shows). */
	status: LinkStatus;
	/** The leaf when the last client detached: `attach` replays the entries after it. */
	detachedAt?: string | null;
}

export type Reply = { type: "reply"; id: number; ok: true; data?: unknown } | ReplyError;
export interface ReplyError {
	type: "reply";
	id: number;
	ok: false;
	message: string;
	hint: string;
	/** Made up by the client: the connection closed before an answer came. */
	closed?: boolean;
}

/**
 * Worker → client, unasked. A `run_end` carries the id of the `prompt` (or `steer` that became
 * one) to the client that sent it, and 0 to every other client (a schedule, a woken turn).
 */
export type WorkerPush =
	/** `own: false`: from a run another client asked for (print and JSON views skip it). */
	| { type: "event"; event: SessionEvent; own?: false }
	| {
			type: "run_end";
			id: number;
			status: string;
			exitCode: number;
			message?: string;
			/** The run was refused with a user error (no key, bad input): print mode says `Error: ` first, as in process. */
			refused?: true;
			commandMessage?: string;
			/** The `result` line of `--mode json`. */
			result: Record<string, unknown>;
			/** How the run ended, as a `SessionLink` view reports it. */
			link: LinkRunEnd;
			/** The session's state once it ended (set by the worker when it sends it). */
			state?: LinkStatus;
	  }
	/** The session's state changed. */
	| { type: "status"; status: LinkStatus }
	/** A cell ignored the interrupt: wait for it or restart the kernel? (`still_busy_answer` with its `question`) */
	| { type: "still_busy"; question: number }
	/** `restart`: the worker is started again at once under the same key (views follow it). */
	| { type: "bye"; reason: string; restart?: boolean };

/** A socket that reads and writes JSON lines. */
export class LineConnection {
	private buffer = "";
	private readonly listeners = new Set<(message: Record<string, unknown>) => void>();
	readonly closed: Promise<void>;

	constructor(readonly socket: Socket) {
		socket.setEncoding("utf8");
		socket.on("data", (chunk: string) => {
			this.buffer += chunk;
			let newline = this.buffer.indexOf("\n");
			while (newline >= 0) {
				const line = this.buffer.slice(0, newline);
				this.buffer = this.buffer.slice(newline + 1);
				newline = this.buffer.indexOf("\n");
				if (line.trim() === "") continue;
				let message: unknown;
				try {
					message = JSON.parse(line);
				} catch {
					this.socket.destroy();
					return;
				}
				if (message && typeof message === "object")
					for (const listener of this.listeners) listener(message as Record<string, unknown>);
			}
		});
		socket.on("error", () => {});
		this.closed = new Promise((resolve) => socket.on("close", () => resolve()));
	}

	onMessage(listener: (message: Record<string, unknown>) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	send(message: unknown): void {
		if (!this.socket.destroyed && this.socket.writable) this.socket.write(`${JSON.stringify(message)}\n`);
	}

	close(): void {
		this.socket.end();
	}
}

/** A client connection: requests with ids, answered by replies; pushes go to `onPush`. */
export class ProtocolClient {
	private nextId = 1;
	private isClosed = false;
	private readonly pending = new Map<number, { resolve: (reply: Reply) => void }>();
	private readonly pushListeners = new Set<(message: Record<string, unknown>) => void>();

	private constructor(readonly connection: LineConnection) {
		connection.onMessage((message) => {
			if (message.type === "reply" && typeof message.id === "number") {
				const waiter = this.pending.get(message.id);
				this.pending.delete(message.id);
				waiter?.resolve(message as unknown as Reply);
				return;
			}
			for (const listener of this.pushListeners) listener(message);
		});
		void connection.closed.then(() => {
			this.isClosed = true;
			for (const [id, waiter] of this.pending)
				waiter.resolve({ type: "reply", id, ok: false, message: "The connection closed.", hint: "", closed: true });
			this.pending.clear();
		});
	}

	/** Connect to a socket; rejects with the connect error (ENOENT, ECONNREFUSED). */
	static connect(path: string): Promise<ProtocolClient> {
		return new Promise((resolve, reject) => {
			const socket = createConnection(path);
			socket.once("connect", () => {
				socket.off("error", reject);
				resolve(new ProtocolClient(new LineConnection(socket)));
			});
			socket.once("error", reject);
		});
	}

	/**
	 * Send a request and wait for its reply (which may be an error; `closed` once the connection is
	 * gone). With `timeoutMs`, a peer that does not answer in time (a stopped process) gets a
	 * `closed` error too.
	 */
	request(message: Record<string, unknown> & { type: string }, timeoutMs?: number): Promise<Reply> {
		const id = this.nextId++;
		const closed = (text: string): Reply => ({ type: "reply", id, ok: false, message: text, hint: "", closed: true });
		if (this.isClosed) return Promise.resolve(closed("The connection closed."));
		return new Promise((resolve) => {
			const timer =
				timeoutMs === undefined
					? undefined
					: setTimeout(() => {
							this.pending.delete(id);
							resolve(closed(`No answer within ${timeoutMs / 1000} s.`));
						}, timeoutMs);
			this.pending.set(id, {
				resolve: (reply) => {
					clearTimeout(timer);
					resolve(reply);
				},
			});
			this.connection.send({ ...message, id });
		});
	}

	/** Send a request without waiting; returns its id. */
	send(message: Record<string, unknown> & { type: string }): number {
		const id = this.nextId++;
		this.connection.send({ ...message, id });
		return id;
	}

	onPush(listener: (message: Record<string, unknown>) => void): () => void {
		this.pushListeners.add(listener);
		return () => this.pushListeners.delete(listener);
	}

	get closed(): Promise<void> {
		return this.connection.closed;
	}

	/** Whether the connection has closed (requests are answered with a `closed` error at once). */
	get isOpen(): boolean {
		return !this.isClosed;
	}

	close(): void {
		this.connection.close();
	}
}

export function replyOk(id: number, data?: unknown): Reply {
	return { type: "reply", id, ok: true, ...(data === undefined ? {} : { data }) };
}

export function replyError(id: number, message: string, hint: string): Reply {
	return { type: "reply", id, ok: false, message, hint };
}
