/**
 * What a view (the terminal UI) drives: one session, wherever it runs. `localLink` drives a
 * session in this process; the daemon's `workerLink` drives one in a background worker over its
 * socket, and the worker itself answers with a `localLink`, so both mean the same thing.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { SessionEntry } from "../session/index.js";
import type { QueuedInput } from "./input-queue.js";
import type { LinkRunEnd, SessionEvent } from "./session-events.js";

/** A slash command as a view offers it (completion, help). */
export interface LinkCommand {
	name: string;
	description?: string;
	/** The words its first argument takes (completion), when it names them. */
	arguments?: readonly string[];
}

/** The session's state now, for a status line and a header. Plain data (it crosses the socket). */
export interface LinkStatus {
	/** `leafId`: the entry the next message continues from (null: before the first). */
	session: { id: string; path: string; cwd: string; persisted: boolean; leafId: string | null };
	model: { provider: string; id: string; baseUrl?: string; contextWindow: number };
	/** Tokens in the context now. */
	contextTokens: number;
	/** Tokens and cost of the session's answers, its sub-agents included. */
	totalTokens: number;
	cost: number;
	runningChildren: number;
	/** A turn runs, or a prompt, woken turn or queued message is under way. */
	running: boolean;
	/**
	 * What waits for the running turn, oldest first: held by the session, so every view lists the
	 * same items and they run whether a view is attached or not.
	 */
	queued: QueuedInput[];
	/** The active goal's objective. */
	goal?: string;
	/** Whether the session's kernel process is up. */
	kernelStarted: boolean;
	/**
	 * Whether a cell runs in the kernel: the current call's, or one that ignored the interrupt and
	 * was left running after its call ended (the next cell waits for it).
	 */
	kernelBusy: boolean;
	commands: LinkCommand[];
}

/** What pressing interrupt did: the running cell, a cell once its kernel runs it, or the whole run. */
export type LinkInterrupt = "cell" | "pending" | "run";

/** How a prompt runs. */
export interface PromptOptions {
	/**
	 * A one-shot run (`-p`, `--mode json`): its end waits until the session is idle and every
	 * sub-agent has settled (Ctrl-C that stops the run stops the wait), and says how its goal or
	 * autonomous run ended.
	 */
	settle?: boolean;
}

export interface SessionLink {
	/** The background agent's key, when the session runs in a worker. */
	readonly agentKey?: string;
	/** Notes for the user about how the session started (problems, an open goal, where it runs). */
	readonly notices: readonly string[];
	/** The session was opened again (`--continue`, `--resume`), not started here: a view says where it stands. */
	readonly resumed: boolean;
	status(): LinkStatus;
	/** Every event of the session (`SessionEvent` says what each means). */
	subscribe(listener: (event: SessionEvent) => void): () => void;
	/** Run a prompt or slash command; resolves when it has ended. */
	prompt(text: string, options?: PromptOptions): Promise<LinkRunEnd>;
	/** Into the running turn after the current step (listed in `queued` until read); a prompt of its own when nothing runs. */
	steer(text: string): Promise<void>;
	/** Queued for after the running turn (listed in `queued` until read); a prompt of its own when nothing runs. */
	followUp(text: string): Promise<void>;
	/**
	 * A prompt or slash command run on its own once the runs before it have ended (at once when
	 * nothing runs); listed in `queued` until it starts. Every view hears its `run_end`.
	 */
	queue(text: string): Promise<void>;
	/**
	 * One press of Ctrl-C: the first press of a run interrupts its running cell (the kernel keeps its
	 * variables) or, with none, stops the run; a later press stops the run. `stop`: end the run at
	 * once (its cell interrupted), as a second press does.
	 */
	interrupt(stop?: boolean): Promise<LinkInterrupt>;
	/** The active branch's conversation, as the model sees it. */
	history(): Promise<AgentMessage[]>;
	/** Every entry of the session, and the current leaf (for `/tree`). */
	tree(): Promise<{ entries: SessionEntry[]; leafId: string | null }>;
	/** Continue from `leafId` (null: before the first entry); the next message starts a branch there. */
	branch(leafId: string | null): Promise<void>;
	/** Lines `start`..`end` of an archived observation (Prime Context's recovery read; no model call). */
	readArchive(id: string, start: number, end: number): Promise<string>;
	/** `provider/id` of the model `ref` names when this session could switch to it; else a `UserError` saying why not. */
	checkModel(ref: string): Promise<string>;
	/** The answer to `still_busy` question number `question` (the latest when not given). */
	answerStillBusy(choice: "wait" | "restart", question?: number): void;
	/**
	 * The view leaves. In this process the running turn stops; a worker's session goes on. Resolves
	 * with what to tell the user about getting back to it.
	 */
	close(): Promise<string>;
}
