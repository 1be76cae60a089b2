import type { AgentMessage, AgentTool } from "@mariozechner/pi-agent-core";
import type { Api, AssistantMessage, ImageContent, Model, TextContent, ToolResultMessage } from "@mariozechner/pi-ai";
import type { HostRequestHandler } from "prime-agent-kernel";
import type { CompactionEntry, SessionEntry } from "../session/index.js";

/** Content of a hidden message (sent to the model as user content, not shown by default). */
export interface HiddenMessage {
	/** Names the kind of message, e.g. `task_snapshot`; kept on the session entry. */
	customType: string;
	content: string | (TextContent | ImageContent)[];
	details?: unknown;
}

/** How many tokens the context holds now, against the model's window. */
export interface ContextUsage {
	/** Last assistant message's reported usage plus an estimate (chars/4) for what came after. */
	tokens: number;
	contextWindow: number;
	/** `tokens / contextWindow`, 0..1 (may exceed 1 just before an overflow). */
	fraction: number;
}

/** What a compaction would summarise and keep; given to `before_compact` handlers. */
export interface CompactionPreparation {
	/** Messages that will be replaced by the summary (the split turn's prefix not included). */
	messagesToSummarize: AgentMessage[];
	/** When the cut lands inside a turn: that turn's messages before the cut, summarised apart. */
	turnPrefixMessages: AgentMessage[];
	/** Id of the first entry kept verbatim. */
	firstKeptEntryId: string;
	/** Context tokens before compacting. */
	tokensBefore: number;
	/** Summary of the previous compaction on the branch, which the new one updates. */
	previousSummary?: string;
	readFiles: string[];
	modifiedFiles: string[];
}

/** Why a session is open: a new one, one picked up again, or a fork of another. */
export type SessionStartReason = "new" | "resume" | "fork";

/**
 * Every event an extension can handle, with what the handler receives and may return.
 * Handlers run in load order; a handler that throws is reported (with its extension's path) and
 * skipped, except `tool_call`, where a throwing handler blocks the call (blocking is its contract).
 */
export interface ExtensionEvents {
	/** The session is ready (after start-up, before the first prompt). Return value ignored. */
	session_start: { event: { reason: SessionStartReason; sessionId: string; sessionFile: string }; result: undefined };
	/** The session is closing (the kernel is still alive while handlers run). Return value ignored. */
	session_shutdown: { event: { sessionId: string }; result: undefined };
	/**
	 * The session was asked to stop (Ctrl-C or Esc past the running cell, SIGTERM, a run's limit), a
	 * run going or not: stop work of your own that the user would wait for. Emitted without waiting
	 * for handlers; return value ignored.
	 */
	session_abort: { event: { sessionId: string }; result: undefined };
	/** This session was forked from `fromSessionFile` (emitted after `session_start`). */
	session_fork: { event: { fromSessionFile: string; atEntryId: string | null }; result: undefined };
	/** The active branch moved: the next entry hangs under `leafId` (`--at`, or an overflow retry). */
	session_tree: { event: { leafId: string | null; previousLeafId: string | null }; result: undefined };
	/** An existing session was picked up (`--resume`, `--continue`). */
	session_switch: { event: { sessionFile: string }; result: undefined };
	/**
	 * A run is about to start: a user prompt's, or one `woken` by delivered messages (a sub-agent's
	 * notice, an agent message, a goal's continuation, a heartbeat or schedule), whose `prompt` is "".
	 * Return `message` to add a hidden message before it, and/or `systemPromptAppend` to append text
	 * to the system prompt (joined by blank lines). Every run of a session goes through this hook, so
	 * a section appended for the same state is the same bytes on every call (the provider's cache).
	 */
	before_agent_start: {
		event: { prompt: string; systemPrompt: string; woken: boolean };
		result: { message?: HiddenMessage; systemPromptAppend?: string } | undefined;
	};
	/** A turn (one provider call and its tool calls) begins; `turnIndex` counts from 0 within the run. */
	turn_start: { event: { turnIndex: number }; result: undefined };
	/**
	 * A turn ended. `toolResults` are the turn's finalized tool results (after `tool_result`
	 * replacements) in the order the assistant message called them, whatever order they finished in.
	 */
	turn_end: {
		event: { turnIndex: number; message: AgentMessage; toolResults: ToolResultMessage[] };
		result: undefined;
	};
	message_start: { event: { message: AgentMessage }; result: undefined };
	/** A streamed assistant message grew; `message` is the partial message so far. */
	message_update: { event: { message: AgentMessage }; result: undefined };
	/** A message is final and was recorded in the session. */
	message_end: { event: { message: AgentMessage }; result: undefined };
	/**
	 * A tool is about to run with validated `input`. Return `{ block: true, reason }` to stop it:
	 * the model receives an error result carrying `reason`. A throwing handler blocks the call too.
	 */
	tool_call: {
		event: { toolCallId: string; toolName: string; input: Record<string, unknown> };
		result: { block?: boolean; reason?: string } | undefined;
	};
	/**
	 * A tool finished. `content` is what the model would see; `details` are the tool's details, as
	 * data (for `ipython`: `stdout`, `stderr`, `result`, `errorName`, `diffs`, `writtenFiles`).
	 * `fullOutputPath` names the file holding the complete output when a stream was capped, and is
	 * given only while `content` is still the tool's own: after a handler replaced the content it is
	 * undefined, since the file no longer stands for what the model sees. Return any of `content`,
	 * `details`, `isError` to replace them: the replacement is what the model sees and what the
	 * transcript stores. Later handlers see the earlier replacements.
	 */
	tool_result: {
		event: {
			toolCallId: string;
			toolName: string;
			input: Record<string, unknown>;
			content: (TextContent | ImageContent)[];
			details: unknown;
			isError: boolean;
			fullOutputPath?: string;
		};
		result: { content?: (TextContent | ImageContent)[]; details?: unknown; isError?: boolean } | undefined;
	};
	/**
	 * Before every provider call. Return `messages` to change what is sent on this call only;
	 * the transcript is never changed. Later handlers receive the earlier handlers' messages.
	 */
	context: { event: { messages: AgentMessage[] }; result: { messages?: AgentMessage[] } | undefined };
	/**
	 * Before every provider call (after `context`): return `append` to add a section after the
	 * system prompt of this call only (after the base prompt and the run's `before_agent_start`
	 * appends; sections joined by blank lines, in load order). Return the same text while your
	 * state is unchanged: the provider's prompt cache starts at the system prompt.
	 */
	system_prompt: { event: { systemPrompt: string }; result: { append?: string } | undefined };
	/**
	 * A compaction is about to summarise. Return `cancel: true` to skip it, or `summary` to use
	 * that text instead of asking the model. The first handler that decides wins.
	 */
	before_compact: {
		event: {
			preparation: CompactionPreparation;
			customInstructions?: string;
			reason: CompactionReason;
			/** Tokens above which the context compacts (a `threshold` compaction runs because the context is over it). */
			threshold: number;
			/** The messages the context holds now, as the next call would send them before `context` handlers. */
			messages: AgentMessage[];
		};
		/** `reason`: what the user is told instead of the summary (default: an extension cancelled it). */
		result: { cancel?: boolean; reason?: string; summary?: string } | undefined;
	};
	/** A compaction entry was written. `fromExtension`: the summary came from a `before_compact` handler. */
	compact: { event: { entry: CompactionEntry; fromExtension: boolean }; result: undefined };
	/** The session's model changed (recorded as a model change entry). */
	model_change: {
		event: { model: Model<Api>; previousModel?: { provider: string; modelId: string } };
		result: undefined;
	};
}

/** Why a compaction runs. */
export type CompactionReason = "threshold" | "overflow" | "command" | "kernel" | "extension";

export type ExtensionEventName = keyof ExtensionEvents;
/** A handler may return nothing (a plain `() => {}`) wherever it has nothing to decide. */
export type ExtensionHandler<K extends ExtensionEventName> = (
	event: ExtensionEvents[K]["event"],
	// biome-ignore lint/suspicious/noConfusingVoidType: handlers written as `() => { ... }` return void.
) => ExtensionEvents[K]["result"] | void | Promise<ExtensionEvents[K]["result"] | void>;

/** A slash command: typed as the whole prompt (`/name args`) in any mode. */
export interface SlashCommand {
	description?: string;
	/** The words that may come first after the name (`/pc status`), offered by the terminal UI's completion. */
	arguments?: readonly string[];
	/**
	 * `args` is the text after the name, trimmed. A returned string is shown to the user as the
	 * command's answer (it never reaches the model); a throw is shown as the command's failure.
	 */
	// biome-ignore lint/suspicious/noConfusingVoidType: commands that print nothing return void.
	handler(args: string): void | string | Promise<void | string>;
}

/** How a hidden message is delivered. */
export type Delivery =
	/** During a run: before the next provider call (after the running tools finish). */
	| "steer"
	/** During a run: once the agent would stop, it goes on with this message. */
	| "followUp"
	/** With the next user prompt. */
	| "nextTurn";

/** What an extension's factory receives. Valid for the whole session. */
export interface ExtensionAPI {
	/** Working directory of the session. */
	readonly cwd: string;
	/** The agent home (`~/.prime/agent`, or `$PRIME_AGENT_DIR`): where an extension keeps its files. */
	readonly agentHome: string;
	/** The environment the session was started with (read it instead of `process.env`). */
	readonly env: NodeJS.ProcessEnv;
	/**
	 * The environment to start a process that runs code the agent does not control with (the
	 * model's, a repository's): `env` without the provider keys and secret-looking variables, as
	 * the kernel gets it.
	 */
	readonly childEnv: Record<string, string>;
	/** Subscribe to an event (see `ExtensionEvents` for each contract). */
	on<K extends ExtensionEventName>(event: K, handler: ExtensionHandler<K>): void;
	/** Add a tool the model can call (its name must not clash with another tool). */
	registerTool(tool: AgentTool): void;
	/** Add `/name`; the name is given without the slash. */
	registerCommand(name: string, command: SlashCommand): void;
	/** Persist state on the active branch; never sent to the model. Returns the entry id. */
	appendEntry(customType: string, data: unknown): string;
	/**
	 * Write the session file now if it is not written yet (it is otherwise written with the first
	 * answer): call it when the user recorded state the extension keeps under the session's id (a
	 * command's effect), so that `-c` and `--resume` find that state even when the session ended
	 * before any answer. Merely opening a session must still leave no file.
	 */
	keepSession(): void;
	/**
	 * Send a hidden message to the model. Default delivery: `steer` while a run is going,
	 * `nextTurn` when idle. It is recorded as a custom message entry when it enters the context.
	 */
	sendMessage(message: HiddenMessage, options?: { deliverAs?: Delivery }): void;
	/** The active branch, root first. */
	getBranch(): readonly SessionEntry[];
	/** The model of the next provider call (its `cost` prices a cached prefix; `contextWindow` its size). */
	getModel(): Model<Api>;
	getContextUsage(): ContextUsage;
	/** Ask for a compaction: now when idle, else at the next turn boundary. */
	compact(options?: { customInstructions?: string }): void;
	/** Report a problem to the user without failing the session. */
	warn(message: string): void;
	/**
	 * Answer `await host_request(type, payload)` from Python in the session's kernel, on the current
	 * kernel and every kernel started later (restarts included). The handler's return value (a JSON
	 * object) becomes the reply `{status: "ok", ...}`; a throw becomes `{status: "error", error}`.
	 * May be called while loading. Returns an unregister function. A type the host already answers (`compact`,
	 * `file.edit`, `files.written`) must not be taken.
	 */
	onHostRequest(type: string, handler: HostRequestHandler): () => void;
	/**
	 * Python code run in every kernel the session starts, after the agent runtime is installed (so
	 * it can define names in the user namespace) and after a saved kernel state is restored (so its
	 * names win). Applies to kernels started after the call: call it while loading or from
	 * `session_start`. Code that fails makes the kernel's start fail with its error: keep it small.
	 * `options.pythonPath` puts the extension's own Python packages on the kernel's path (so a cell
	 * can `import` them); `options.names` lists the names the code defines in the user namespace:
	 * like the runtime's handles they are never saved with the kernel state nor listed to the model
	 * as its variables, since every kernel defines them again.
	 */
	addKernelStartup(code: string, options?: KernelStartupOptions): void;
}

/** What start-up code of an extension brings into the kernel (see `addKernelStartup`). */
export interface KernelStartupOptions {
	/** Directories put on the kernel's `PYTHONPATH` (after the agent runtime's). */
	pythonPath?: string[];
	/** Names the code defines in the user namespace. */
	names?: string[];
}

/** The module's default export (or its `extension` export). May be async. */
export type ExtensionFactory = (api: ExtensionAPI) => void | Promise<void>;

/** A problem with an extension: failed to load, or a handler threw. */
export interface ExtensionProblem {
	/** Path of the extension's module. */
	path: string;
	/** What failed, e.g. `load` or the event name. */
	phase: string;
	message: string;
}

/** Re-exported for handler signatures. */
export type { AssistantMessage };
