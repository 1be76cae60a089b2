/**
 * What a client may ask the supervisor and a worker, and what each answers: one map per process,
 * `kind → { request, reply }`. A client's `request(kind)` is typed by it (see `ProtocolClient`); a
 * server parses each line once at its socket into one of these (`parseRequest`), so its handlers
 * read typed fields and a line that is not one (a missing field, a wrong type, an unknown kind) is
 * answered with an error that names it.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { LinkInterrupt, LinkStatus } from "../link/index.js";
import type { ScheduleJob } from "../schedules/index.js";
import type { SessionEntry } from "../session/index.js";
import type {
	AgentAgain,
	AgentInfo,
	ProtocolClient,
	RequestMap,
	RequestOf,
	WorkerOwner,
	WorkerSessionOptions,
	WorkerWelcome,
} from "./protocol.js";
import type { SpareState } from "./spare-worker.js";

/** Any request of map `M`, with its id: what a server's handlers receive. */
export type AnyRequest<M extends RequestMap> = { [K in keyof M & string]: RequestOf<M, K> & { id: number } }[keyof M &
	string];

/** Every connection opens with it (see `handshake.ts`). */
export interface Hello {
	token: string;
	version: number;
}

/** Where a started (or found) agent's worker listens; `attached`: it served the session already. */
export interface WorkerTarget {
	key: string;
	socket: string;
	attached?: boolean;
}

/** Client → supervisor. */
export type SupervisorRequests = {
	hello: { request: Hello; reply: { pid: number } };
	start: {
		request: { options: WorkerSessionOptions; owner: WorkerOwner; env: Record<string, string> };
		reply: WorkerTarget;
	};
	/** Start a saved agent again (`changes`: on another model, at an entry: `/model`); a live one is just named. */
	resume: { request: AgentAgain; reply: WorkerTarget };
	/** Stop a live agent and start it again under its key with `changes` (`/model`); its views follow it. */
	restart: { request: AgentAgain; reply: WorkerTarget };
	list: { request: object; reply: AgentInfo[] };
	/** `spare`: the worker kept loaded for the next start (see `SpareWorkers`). */
	status: { request: object; reply: { pid: number; socket: string; agents: AgentInfo[]; spare: SpareState } };
	stop: { request: { key: string; force?: boolean }; reply: AgentInfo };
	stop_all: { request: { force?: boolean }; reply: undefined };
};

/** Client → worker. */
export type WorkerRequests = {
	/** `answers`: the view answers questions (`still_busy`), as the terminal UI does. */
	hello: { request: Hello & { oneShot?: boolean; answers?: boolean }; reply: WorkerWelcome };
	/** Run a prompt or slash command; `run_end` with the same id tells how it ended. */
	prompt: { request: { text: string; settle?: boolean }; reply: { queued: true } };
	/** Into the running turn (as a user message), or a prompt when nothing runs. The worker holds it until read. */
	steer: { request: { text: string }; reply: { delivered: "prompt" | "steer" } };
	/** Queued for the next turn, or a prompt when nothing runs. The worker holds it until read. */
	follow_up: { request: { text: string }; reply: { delivered: "prompt" | "follow_up" } };
	/**
	 * A prompt or slash command run once the runs before it have ended, whether or not this client is
	 * still attached; every client gets its `run_end` with id 0.
	 */
	queue: { request: { text: string }; reply: { queued: true } };
	/** Ctrl-C: the running cell first, then the run; `stop`: the run at once (SIGTERM to a view). */
	interrupt: { request: { stop?: boolean }; reply: { action: LinkInterrupt } };
	detach: { request: object; reply: undefined };
	schedule_add: { request: { when: string; text: string; delivery?: "steer" | "follow_up" }; reply: ScheduleJob };
	schedule_list: { request: object; reply: ScheduleJob[] };
	schedule_remove: { request: { scheduleId: string }; reply: ScheduleJob };
	/** `restart`: it is started again at once (another model); views follow it instead of ending. */
	shutdown: { request: { reason?: string; restart?: boolean }; reply: undefined };
	/** What a `SessionLink` asks (see `link/session-link.ts`): the state, the conversation, the tree. */
	status: { request: object; reply: LinkStatus };
	history: { request: object; reply: AgentMessage[] };
	tree: { request: object; reply: { entries: SessionEntry[]; leafId: string | null } };
	branch: { request: { leafId: string | null }; reply: undefined };
	read_archive: { request: { archiveId: string; start: number; end: number }; reply: string };
	check_model: { request: { ref: string }; reply: string };
	still_busy_answer: { request: { choice: "wait" | "restart"; question?: number }; reply: undefined };
	/** Leave for another session: the worker stops when this was its only view and it has nothing to do. */
	release: { request: object; reply: { stopping: boolean } };
};

/** A connection to the supervisor, after its `hello`. */
export type SupervisorClient = ProtocolClient<SupervisorRequests>;
/** A view's connection to a worker, after its `hello`. */
export type WorkerClient = ProtocolClient<WorkerRequests>;

/** A line that is not a request of the process it was sent to; `id` is the line's, when it had one. */
export class BadRequest extends Error {
	constructor(
		message: string,
		readonly id: number,
	) {
		super(message);
		this.name = "BadRequest";
	}
}

/** Reads one field of a request, or says which field is wrong. */
class Fields {
	constructor(
		private readonly line: Record<string, unknown>,
		private readonly id: number,
	) {}

	private wrong(name: string, what: string): never {
		throw new BadRequest(`Request ${String(this.line.type)} needs ${name} to be ${what}.`, this.id);
	}

	string(name: string): string {
		const value = this.line[name];
		return typeof value === "string" ? value : this.wrong(name, "a string");
	}

	number(name: string): number {
		const value = this.line[name];
		return typeof value === "number" && Number.isFinite(value) ? value : this.wrong(name, "a number");
	}

	optionalString(name: string): string | undefined {
		return this.line[name] === undefined ? undefined : this.string(name);
	}

	optionalNumber(name: string): number | undefined {
		return this.line[name] === undefined ? undefined : this.number(name);
	}

	optionalBoolean(name: string): boolean | undefined {
		const value = this.line[name];
		if (value === undefined || typeof value === "boolean") return value;
		return this.wrong(name, "true or false");
	}

	oneOf<T extends string>(name: string, values: readonly T[]): T {
		const value = this.line[name];
		return values.includes(value as T) ? (value as T) : this.wrong(name, values.map((v) => `"${v}"`).join(" or "));
	}

	optionalOneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
		return this.line[name] === undefined ? undefined : this.oneOf(name, values);
	}

	stringOrNull(name: string): string | null {
		return this.line[name] === null ? null : this.string(name);
	}

	/** An object field, read with its own `Fields` (its errors name the outer field). */
	object(name: string): Fields {
		const value = this.line[name];
		if (!isObject(value)) return this.wrong(name, "an object");
		return new Fields({ ...value, type: `${String(this.line.type)} (${name})` }, this.id);
	}

	optionalObject(name: string): Fields | undefined {
		return this.line[name] === undefined ? undefined : this.object(name);
	}

	strings(name: string): string[] {
		const value = this.line[name];
		return Array.isArray(value) && value.every((item) => typeof item === "string")
			? value
			: this.wrong(name, "a list of strings");
	}

	optionalStrings(name: string): string[] | undefined {
		return this.line[name] === undefined ? undefined : this.strings(name);
	}

	/** A map of names to strings (an environment). */
	stringMap(name: string): Record<string, string> {
		const value = this.line[name];
		return isObject(value) && Object.values(value).every((item) => typeof item === "string")
			? (value as Record<string, string>)
			: this.wrong(name, "a map of names to strings");
	}

	optionalStringMap(name: string): Record<string, string> | undefined {
		return this.line[name] === undefined ? undefined : this.stringMap(name);
	}

	/** The whole object, for a field whose shape is its reader's (`autonomous`). */
	raw(): Record<string, unknown> {
		const { type: _type, ...rest } = this.line;
		return rest;
	}
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How each kind's fields are read. */
type Parsers<M extends RequestMap> = { [K in keyof M & string]: (fields: Fields) => M[K]["request"] };

const none = () => ({});

/** Fields left undefined are left out, as they would be on the wire. */
function defined<T extends object>(value: T): T {
	return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

function sessionOptions(fields: Fields): WorkerSessionOptions {
	const goal = fields.optionalObject("goal");
	return defined({
		cwd: fields.string("cwd"),
		model: fields.optionalString("model"),
		continueLatest: fields.optionalBoolean("continueLatest"),
		resume: fields.optionalString("resume"),
		fork: fields.optionalString("fork"),
		at: fields.optionalString("at"),
		tools: fields.optionalStrings("tools"),
		thinkingLevel: fields.optionalString("thinkingLevel"),
		extensionPaths: fields.optionalStrings("extensionPaths"),
		goal:
			goal &&
			defined({
				objective: goal.string("objective"),
				tokens: goal.optionalString("tokens"),
				turns: goal.optionalString("turns"),
				minutes: goal.optionalString("minutes"),
			}),
		// Read by the session's own option parser, which names what is wrong in it.
		autonomous: fields.optionalObject("autonomous")?.raw(),
		allowMissingKey: fields.optionalBoolean("allowMissingKey"),
		trustProject: fields.optionalBoolean("trustProject"),
		kernelUrl: fields.optionalString("kernelUrl"),
	});
}

function agentAgain(fields: Fields): AgentAgain {
	const changes = fields.optionalObject("changes");
	return defined({
		key: fields.string("key"),
		env: fields.optionalStringMap("env"),
		changes: changes && defined({ model: changes.optionalString("model"), at: changes.optionalString("at") }),
	});
}

const hello = (fields: Fields): Hello => ({ token: fields.string("token"), version: fields.number("version") });

const SUPERVISOR_PARSERS: Parsers<SupervisorRequests> = {
	hello,
	start: (fields) => ({
		options: sessionOptions(fields.object("options")),
		owner: fields.oneOf("owner", ["oneshot", "resident"] as const),
		env: fields.optionalStringMap("env") ?? {},
	}),
	resume: agentAgain,
	restart: agentAgain,
	list: none,
	status: none,
	stop: (fields) => defined({ key: fields.string("key"), force: fields.optionalBoolean("force") }),
	stop_all: (fields) => defined({ force: fields.optionalBoolean("force") }),
};

const text = (fields: Fields) => ({ text: fields.string("text") });

const WORKER_PARSERS: Parsers<WorkerRequests> = {
	hello: (fields) =>
		defined({
			...hello(fields),
			oneShot: fields.optionalBoolean("oneShot"),
			answers: fields.optionalBoolean("answers"),
		}),
	prompt: (fields) => defined({ text: fields.string("text"), settle: fields.optionalBoolean("settle") }),
	steer: text,
	follow_up: text,
	queue: text,
	interrupt: (fields) => defined({ stop: fields.optionalBoolean("stop") }),
	detach: none,
	schedule_add: (fields) =>
		defined({
			when: fields.string("when"),
			text: fields.string("text"),
			delivery: fields.optionalOneOf("delivery", ["steer", "follow_up"] as const),
		}),
	schedule_list: none,
	schedule_remove: (fields) => ({ scheduleId: fields.string("scheduleId") }),
	shutdown: (fields) =>
		defined({ reason: fields.optionalString("reason"), restart: fields.optionalBoolean("restart") }),
	status: none,
	history: none,
	tree: none,
	branch: (fields) => ({ leafId: fields.stringOrNull("leafId") }),
	read_archive: (fields) => ({
		archiveId: fields.string("archiveId"),
		start: fields.number("start"),
		end: fields.number("end"),
	}),
	check_model: (fields) => ({ ref: fields.string("ref") }),
	still_busy_answer: (fields) =>
		defined({
			choice: fields.oneOf("choice", ["wait", "restart"] as const),
			question: fields.optionalNumber("question"),
		}),
	release: none,
};

/** How a server reads its requests: its process's parsers. */
export interface RequestParser<M extends RequestMap> {
	/** Who answers, as an error names it ("the supervisor", "this worker"). */
	readonly who: string;
	parse(line: Record<string, unknown>): AnyRequest<M>;
}

function parserOf<M extends RequestMap>(who: string, parsers: Parsers<M>): RequestParser<M> {
	return {
		who,
		parse(line) {
			const id = typeof line.id === "number" && Number.isInteger(line.id) ? line.id : 0;
			const type = line.type;
			if (typeof type !== "string" || !Object.hasOwn(parsers, type))
				throw new BadRequest(
					typeof type === "string" ? `Unknown request ${type} to ${who}.` : `A request to ${who} has no type.`,
					id,
				);
			const fields = parsers[type as keyof M & string](new Fields(line, id));
			return { ...fields, type, id } as AnyRequest<M>;
		},
	};
}

export const supervisorRequests = parserOf("the supervisor", SUPERVISOR_PARSERS);
export const workerRequests = parserOf("this worker", WORKER_PARSERS);
