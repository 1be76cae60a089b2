/**
 * The daemon's wire protocol: JSON objects, one per line, over a Unix socket in a user-only
 * directory. Every connection opens with `hello` carrying the per-user token; anything else, or a
 * wrong token, is answered with an error and the connection is closed. Requests carry an `id`;
 * their answer is a `reply` with the same `id`. Workers also push `event`, `run_end` and `bye`.
 */
import { createConnection, type Socket } from "node:net";
import type { LinkRunEnd, LinkStatus, SessionEvent } from "../link/index.js";

export const DAEMON_PROTOCOL_VERSION = 1;

/** One request kind: the fields it carries (besides `type` and `id`) and the data its reply carries. */
export interface Exchange {
	request: object;
	reply: unknown;
}

/** A process's requests by kind. */
export type RequestMap = Record<string, Exchange>;

/** Any kind with any fields: a connection to a socket not yet known to be a supervisor's or a worker's. */
export type UntypedRequests = Record<string, { request: Record<string, unknown>; reply: unknown }>;

/** A request of kind `K` as it travels (`id` is added by the client). */
export type RequestOf<M extends RequestMap, K extends keyof M & string> = { type: K } & M[K]["request"];

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

/** The answer to a request; `T`: what the request's kind answers (see `requests.ts`). */
export type Reply<T = unknown> = { type: "reply"; id: number; ok: true; data?: T } | ReplyError;
export interface ReplyError {
	type: "reply";
	id: number;
	ok: false;
	message: string;
	hint: string;
	/** The exit code a command line client ends with (the supervisor's user errors: a full disk is 6). */
	exitCode?: number;
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
	/** How a run ended (`end.result`: the `result` line of `--mode json`); `state`: the session's state once it ended. */
	| { type: "run_end"; id: number; end: LinkRunEnd; state?: LinkStatus }
	/** The session's state changed. */
	| { type: "status"; status: LinkStatus }
	/** A cell ignored the interrupt: wait for it or restart the kernel? (`still_busy_answer` with its `question`) */
	| { type: "still_busy"; question: number }
	/** `restart`: the worker is started again at once under the same key (views follow it). */
	| { type: "bye"; reason: string; restart?: boolean };

/**
 * A socket that reads and writes JSON lines. A line that is not a JSON object goes to `onBadLine`
 * (a server answers it with an error); with none, the connection is closed: its peer does not speak
 * the protocol.
 */
export class LineConnection {
	private buffer = "";
	private readonly listeners = new Set<(message: Record<string, unknown>) => void>();
	readonly closed: Promise<void>;

	constructor(
		readonly socket: Socket,
		onBadLine?: (line: string) => void,
	) {
		socket.setEncoding("utf8");
		socket.on("data", (chunk: string) => {
			this.buffer += chunk;
			let newline = this.buffer.indexOf("\n");
			while (newline >= 0) {
				const line = this.buffer.slice(0, newline);
				this.buffer = this.buffer.slice(newline + 1);
				newline = this.buffer.indexOf("\n");
				if (line.trim() === "") continue;
				const message = parseLine(line);
				if (message) for (const listener of this.listeners) listener(message);
				else if (onBadLine) onBadLine(line);
				else {
					this.socket.destroy();
					return;
				}
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

function parseLine(line: string): Record<string, unknown> | undefined {
	try {
		const message: unknown = JSON.parse(line);
		return typeof message === "object" && message !== null && !Array.isArray(message)
			? (message as Record<string, unknown>)
			: undefined;
	} catch {
		return undefined;
	}
}

/**
 * A client connection: requests with ids, answered by replies; pushes go to `onPush`. `M` is what
 * the process at the other end answers (`SupervisorRequests`, `WorkerRequests`): a request's reply
 * is typed by its kind.
 */
export class ProtocolClient<M extends RequestMap = UntypedRequests> {
	private nextId = 1;
	private isClosed = false;
	private readonly pending = new Map<number, { resolve: (reply: Reply) => void }>();
	private readonly pushListeners = new Set<(message: WorkerPush) => void>();

	private constructor(readonly connection: LineConnection) {
		connection.onMessage((message) => {
			if (message.type === "reply" && typeof message.id === "number") {
				const waiter = this.pending.get(message.id);
				this.pending.delete(message.id);
				waiter?.resolve(message as Reply);
				return;
			}
			// The peer is our own worker, reached with the user's token: its pushes are taken as it sends them.
			for (const listener of this.pushListeners) listener(message as WorkerPush);
		});
		void connection.closed.then(() => {
			this.isClosed = true;
			for (const [id, waiter] of this.pending)
				waiter.resolve({ type: "reply", id, ok: false, message: "The connection closed.", hint: "", closed: true });
			this.pending.clear();
		});
	}

	/** Connect to a socket; rejects with the connect error (ENOENT, ECONNREFUSED). */
	static connect<M extends RequestMap = UntypedRequests>(path: string): Promise<ProtocolClient<M>> {
		return new Promise((resolve, reject) => {
			const socket = createConnection(path);
			socket.once("connect", () => {
				socket.off("error", reject);
				resolve(new ProtocolClient<M>(new LineConnection(socket)));
			});
			socket.once("error", reject);
		});
	}

	/**
	 * Send a request and wait for its reply (which may be an error; `closed` once the connection is
	 * gone). With `timeoutMs`, a peer that does not answer in time (a stopped process) gets a
	 * `closed` error too.
	 */
	request<K extends keyof M & string>(message: RequestOf<M, K>, timeoutMs?: number): Promise<Reply<M[K]["reply"]>> {
		const id = this.nextId++;
		const closed = (text: string): Reply<never> => ({
			type: "reply",
			id,
			ok: false,
			message: text,
			hint: "",
			closed: true,
		});
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
					// The server answers each kind with that kind's data (see its handler table).
					resolve(reply as Reply<M[K]["reply"]>);
				},
			});
			this.connection.send({ ...message, id });
		});
	}

	/** Send a request without waiting; returns its id. */
	send<K extends keyof M & string>(message: RequestOf<M, K>): number {
		const id = this.nextId++;
		this.connection.send({ ...message, id });
		return id;
	}

	onPush(listener: (message: WorkerPush) => void): () => void {
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

export function replyOk<T>(id: number, data?: T): Reply<T> {
	return { type: "reply", id, ok: true, ...(data === undefined ? {} : { data }) };
}

export function replyError(id: number, message: string, hint: string): ReplyError {
	return { type: "reply", id, ok: false, message, hint };
}
