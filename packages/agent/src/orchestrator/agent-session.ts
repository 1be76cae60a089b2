import {
	Agent,
	type AgentEvent,
	type AgentMessage,
	type AgentTool,
	type ThinkingLevel,
} from "@mariozechner/pi-agent-core";
import {
	type Api,
	type AssistantMessage,
	isContextOverflow,
	type Model,
	type ToolResultMessage,
} from "@mariozechner/pi-ai";
import type { HostRequestHandler } from "prime-agent-kernel";
import {
	type CompactionSettings,
	type CompactResult,
	compactSession,
	contextTokens,
	DEFAULT_COMPACTION_SETTINGS,
	shouldCompact,
} from "../compaction/index.js";
import type {
	CompactionReason,
	ContextUsage,
	Delivery,
	ExtensionHost,
	ExtensionRunner,
	HiddenMessage,
} from "../extensions/index.js";
import { type NewEntry, type Session, type SessionEntry, toLlmMessages } from "../session/index.js";
import type { SessionKernel } from "../tools/index.js";
import { parseSlashCommand } from "./slash-commands.js";

export interface AgentSessionOptions {
	model: Model<Api>;
	/** Key for the model's provider (resolved before the session starts). */
	apiKey: string;
	systemPrompt: string;
	tools: AgentTool[];
	thinkingLevel?: ThinkingLevel;
	/** Loaded extensions; their tools join `tools` and their handlers see every event. */
	extensions?: ExtensionRunner;
	/** The session's kernel: compaction lists its names for `<ipython_state>` (and never resets it). */
	kernel?: SessionKernel;
	compaction?: CompactionSettings;
}

/** How one prompt ended. */
export interface RunOutcome {
	status: "ok" | "error" | "aborted";
	/** The provider's or loop's message when `status` is `error`. */
	errorMessage?: string;
	/** The last assistant message of the run, if any. */
	lastAssistant?: AssistantMessage;
	/** Set when the prompt was a slash command (no model call unless the command made one). */
	command?: { name: string; message?: string };
}

/** What the session does besides loop events: compactions, extension problems, command messages. */
export type SessionNotice =
	| { type: "compaction_start"; reason: CompactionReason }
	| { type: "compaction_end"; reason: CompactionReason; result: CompactResult }
	| { type: "compaction_failed"; reason: CompactionReason; message: string }
	| { type: "extension_problem"; path: string; phase: string; message: string };

interface CompactionRequest {
	reason: CompactionReason;
	customInstructions?: string;
}

/**
 * Wires one session to the agent loop: the context is rebuilt from the session's active branch,
 * every message the loop finishes is appended to the session as it happens, and model changes are
 * recorded. Extensions see every event through the loop's hooks; compaction runs at turn
 * boundaries (before a provider call) when the context nears the window or was asked for, and
 * after a context-overflow error (then the request is retried once).
 */
export class AgentSession implements ExtensionHost {
	readonly agent: Agent;
	readonly extensions: ExtensionRunner | undefined;
	private readonly listeners = new Set<(event: AgentEvent) => void>();
	private readonly noticeListeners = new Set<(notice: SessionNotice) => void>();
	/** Entries recorded only once a prompt is sent, so opening a session and leaving changes nothing. */
	private pending: NewEntry[] = [];
	private readonly baseSystemPrompt: string;
	private readonly compactionSettings: CompactionSettings;
	private compactionRequest: CompactionRequest | undefined;
	/** A compaction happened during the current run: the loop's own message list is stale. */
	private compactedInRun = false;
	private turnIndex = 0;

	constructor(
		readonly session: Session,
		private readonly options: AgentSessionOptions,
	) {
		this.extensions = options.extensions;
		this.baseSystemPrompt = options.systemPrompt;
		this.compactionSettings = options.compaction ?? DEFAULT_COMPACTION_SETTINGS;
		const context = session.context();
		const thinkingLevel = options.thinkingLevel ?? context.thinkingLevel ?? "off";
		this.agent = new Agent({
			initialState: {
				systemPrompt: options.systemPrompt,
				model: options.model,
				thinkingLevel,
				tools: this.collectTools(options.tools),
				messages: context.messages,
			},
			convertToLlm: toLlmMessages,
			getApiKey: () => options.apiKey,
			sessionId: session.id,
			toolExecution: "sequential",
			transformContext: (messages, signal) => this.beforeProviderCall(messages, signal),
			beforeToolCall: async ({ toolCall, args }) =>
				this.extensions?.toolCall({
					toolCallId: toolCall.id,
					toolName: toolCall.name,
					input: (args ?? {}) as Record<string, unknown>,
				}),
			afterToolCall: async ({ toolCall, args, result, isError }) => {
				// A tool reports a failed run (a cell that raised) in its details, keeping them intact.
				const failed = isError || (result.details as { isError?: unknown } | undefined)?.isError === true;
				if (!this.extensions?.has("tool_result")) return failed ? { isError: true } : undefined;
				const final = await this.extensions.emit(
					"tool_result",
					{
						toolCallId: toolCall.id,
						toolName: toolCall.name,
						input: (args ?? {}) as Record<string, unknown>,
						content: result.content,
						details: result.details,
						isError: failed,
						fullOutputPath: fullOutputPath(result.details),
					},
					(replacement, payload) => ({
						...payload,
						...(replacement?.content ? { content: replacement.content } : {}),
						...(replacement && "details" in replacement ? { details: replacement.details } : {}),
						...(typeof replacement?.isError === "boolean" ? { isError: replacement.isError } : {}),
						fullOutputPath: fullOutputPath(
							replacement && "details" in replacement ? replacement.details : payload.details,
						),
					}),
				);
				return { content: final.content, details: final.details, isError: final.isError };
			},
		});
		const recorded = context.model;
		if (!recorded || recorded.provider !== options.model.provider || recorded.modelId !== options.model.id) {
			this.pending.push({ type: "model_change", provider: options.model.provider, modelId: options.model.id });
		}
		if (thinkingLevel !== (context.thinkingLevel ?? "off")) {
			this.pending.push({ type: "thinking_level_change", thinkingLevel });
		}
		this.agent.subscribe(async (event) => {
			if (event.type === "message_end") this.record(event.message);
			for (const listener of this.listeners) listener(event);
			await this.forwardToExtensions(event);
		});
		this.extensions?.onProblem((problem) => this.notify({ type: "extension_problem", ...problem }));
		this.extensions?.bind(this);
	}

	get model(): Model<Api> {
		return this.agent.state.model;
	}

	/** Listen to every loop event (after it was recorded in the session). */
	subscribe(listener: (event: AgentEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Listen to compactions and extension problems. */
	onNotice(listener: (notice: SessionNotice) => void): () => void {
		this.noticeListeners.add(listener);
		return () => this.noticeListeners.delete(listener);
	}

	/**
	 * Add a message the model sees just before the next prompt (recorded then, as a custom message).
	 */
	addHostNote(customType: string, text: string): void {
		this.pending.push({ type: "custom_message", customType, content: text, display: false });
	}

	/**
	 * Run one user prompt to the end of the agent's turn. Never throws for model failures. A
	 * prompt `/name args` runs the slash command `name` instead (`/compact` or an extension's).
	 */
	async prompt(text: string): Promise<RunOutcome> {
		const command = parseSlashCommand(text);
		if (command && (command.name === "compact" || this.extensions?.command(command.name))) {
			return this.runCommand(command.name, command.args);
		}
		await this.flushPending();
		const started = await this.extensions?.emit(
			"before_agent_start",
			{ prompt: text, systemPrompt: this.baseSystemPrompt },
			(result, payload) => {
				if (result?.message) this.pushHiddenMessage(result.message);
				if (result?.systemPromptAppend)
					return { ...payload, systemPrompt: `${payload.systemPrompt}\n\n${result.systemPromptAppend}` };
				return payload;
			},
		);
		this.agent.state.systemPrompt = started?.systemPrompt ?? this.baseSystemPrompt;
		try {
			let outcome = await this.run(() => this.agent.prompt(text));
			if (
				outcome.status === "error" &&
				outcome.lastAssistant &&
				isContextOverflow(outcome.lastAssistant, this.model.contextWindow)
			) {
				outcome = await this.retryAfterOverflow(outcome);
			}
			if (this.compactionRequest && outcome.status !== "aborted") {
				const request = this.compactionRequest;
				this.compactionRequest = undefined;
				await this.compact(request.reason, request.customInstructions);
			}
			return outcome;
		} finally {
			this.agent.state.systemPrompt = this.baseSystemPrompt;
		}
	}

	/**
	 * Compact now (the session must be idle): `/compact`, or an embedding host. Failures are
	 * reported as a `compaction_failed` notice and returned; the session is unchanged then.
	 */
	async compact(reason: CompactionReason = "command", customInstructions?: string): Promise<CompactResult | undefined> {
		try {
			const result = await compactSession({
				session: this.session,
				model: this.model,
				apiKey: this.options.apiKey,
				kernel: this.options.kernel,
				extensions: this.extensions,
				settings: this.compactionSettings,
				reason,
				customInstructions,
				signal: this.agent.signal,
				onStart: () => this.notify({ type: "compaction_start", reason }),
			});
			if (result.status === "compacted") {
				this.compactedInRun = this.running;
				if (!this.running) this.agent.state.messages = this.session.context().messages;
			}
			// The automatic trigger finding nothing to summarise is not news; it retries at each call.
			if (result.status !== "nothing" || reason !== "threshold")
				this.notify({ type: "compaction_end", reason, result });
			return result;
		} catch (error) {
			this.notify({ type: "compaction_failed", reason, message: (error as Error).message });
			return undefined;
		}
	}

	/** Ask for a compaction: at the next turn boundary during a run, else now (when idle, it runs at once). */
	requestCompaction(customInstructions?: string, reason: CompactionReason = "extension"): void {
		this.compactionRequest = { reason, customInstructions };
		if (!this.running) {
			this.compactionRequest = undefined;
			void this.compact(reason, customInstructions);
		}
	}

	/** Abort the whole run (the running cell is interrupted too). */
	abort(): void {
		this.agent.abort();
	}

	get running(): boolean {
		return this.agent.state.isStreaming;
	}

	// ExtensionHost

	appendEntry(customType: string, data: unknown): string {
		return this.session.appendCustom(customType, data);
	}

	sendMessage(message: HiddenMessage, deliverAs?: Delivery): void {
		const how = deliverAs ?? (this.running ? "steer" : "nextTurn");
		const note = hostMessage(message);
		if (how === "nextTurn" || !this.running) {
			this.pending.push({ type: "custom_message", ...message, display: false });
		} else if (how === "steer") this.agent.steer(note);
		else this.agent.followUp(note);
	}

	getBranch(): readonly SessionEntry[] {
		return this.session.branch();
	}

	getContextUsage(): ContextUsage {
		const tokens = contextTokens(this.session.context().messages);
		const contextWindow = this.model.contextWindow;
		return { tokens, contextWindow, fraction: contextWindow > 0 ? tokens / contextWindow : 0 };
	}

	/** Without a kernel (an embedding host that gave none) there is nothing to answer. */
	onHostRequest(type: string, handler: HostRequestHandler): () => void {
		return this.options.kernel?.onHostRequest(type, handler) ?? (() => {});
	}

	addKernelStartup(code: string): void {
		this.options.kernel?.addStartupCode(code);
	}

	/** Emit the session events of start-up to extensions (the session is ready, before any prompt). */
	async announceStart(event: {
		reason: "new" | "resume" | "fork";
		forkedFrom?: { sessionFile: string; atEntryId: string | null };
		branchedFrom?: { leafId: string | null; previousLeafId: string | null };
	}): Promise<void> {
		const runner = this.extensions;
		if (!runner) return;
		await runner.emit("session_start", {
			reason: event.reason,
			sessionId: this.session.id,
			sessionFile: this.session.path,
		});
		if (event.forkedFrom)
			await runner.emit("session_fork", {
				fromSessionFile: event.forkedFrom.sessionFile,
				atEntryId: event.forkedFrom.atEntryId,
			});
		if (event.reason === "resume") await runner.emit("session_switch", { sessionFile: this.session.path });
		if (event.branchedFrom) await runner.emit("session_tree", event.branchedFrom);
	}

	/** Tell extensions the session is closing (call before the kernel shuts down). */
	async shutdown(): Promise<void> {
		await this.extensions?.emit("session_shutdown", { sessionId: this.session.id });
	}

	private async run(start: () => Promise<void>): Promise<RunOutcome> {
		const before = this.agent.state.messages.length;
		this.compactedInRun = false;
		try {
			await start();
		} finally {
			// The loop kept every message; after a compaction the session's rebuilt context is the truth.
			if (this.compactedInRun) this.agent.state.messages = this.session.context().messages;
			this.compactedInRun = false;
		}
		return this.outcome(before);
	}

	private outcome(before: number): RunOutcome {
		const added = this.agent.state.messages.slice(Math.min(before, this.agent.state.messages.length));
		const lastAssistant = [...added].reverse().find((message) => message.role === "assistant") as
			| AssistantMessage
			| undefined;
		if (lastAssistant?.stopReason === "aborted") return { status: "aborted", lastAssistant };
		if (lastAssistant?.stopReason === "error" || this.agent.state.errorMessage) {
			return {
				status: "error",
				errorMessage: lastAssistant?.errorMessage ?? this.agent.state.errorMessage,
				lastAssistant,
			};
		}
		return { status: "ok", lastAssistant };
	}

	/**
	 * The provider said the context is too long: move the branch back before the failed answer
	 * (it stays in the file on the abandoned branch), compact, and try once more.
	 */
	private async retryAfterOverflow(failed: RunOutcome): Promise<RunOutcome> {
		const leaf = this.session.leafId;
		const entry = leaf ? this.session.entry(leaf) : undefined;
		const isFailedAnswer =
			entry?.type === "message" && entry.message.role === "assistant" && entry.message.stopReason === "error";
		if (!entry || !isFailedAnswer) return failed;
		this.session.branchFrom(entry.parentId);
		await this.extensions?.emit("session_tree", { leafId: entry.parentId, previousLeafId: leaf });
		const result = await this.compact("overflow");
		if (result?.status !== "compacted") return failed;
		this.agent.state.messages = this.session.context().messages;
		return this.run(() => this.agent.continue());
	}

	private async runCommand(name: string, args: string): Promise<RunOutcome> {
		if (name === "compact" && !this.extensions?.command("compact")) {
			await this.flushPending();
			const result = await this.compact("command", args || undefined);
			if (!result)
				return {
					status: "error",
					errorMessage: "Compaction failed; the conversation is unchanged.",
					command: { name },
				};
			const message =
				result.status === "compacted"
					? `Compacted: ${result.entry.tokensBefore.toLocaleString("en-US")} tokens before; the kernel kept its state.`
					: result.message;
			return { status: "ok", command: { name, message } };
		}
		const command = this.extensions?.command(name);
		try {
			const answer = await command?.handler(args);
			return { status: "ok", command: typeof answer === "string" ? { name, message: answer } : { name } };
		} catch (error) {
			const message = `The command /${name} failed: ${(error as Error).message}`;
			return { status: "error", errorMessage: message, command: { name, message } };
		}
	}

	/** Before every provider call: compact when due (a turn boundary), then let extensions rewrite. */
	private async beforeProviderCall(messages: AgentMessage[], _signal?: AbortSignal): Promise<AgentMessage[]> {
		let current = messages;
		try {
			const request = this.compactionRequest;
			const due = shouldCompact(contextTokens(current), this.model.contextWindow, this.compactionSettings);
			if (request || due) {
				this.compactionRequest = undefined;
				await this.compact(request?.reason ?? "threshold", request?.customInstructions);
			}
			if (this.compactedInRun) current = this.session.context().messages;
		} catch {
			// compact() reports its own failures; the call goes on with the uncompacted context.
		}
		if (!this.extensions?.has("context")) return current;
		const result = await this.extensions.emit("context", { messages: current }, (replacement, payload) =>
			Array.isArray(replacement?.messages) ? { messages: replacement.messages } : payload,
		);
		return result.messages;
	}

	private record(message: AgentMessage): void {
		if (message.role === "host") {
			const { customType, content, display, details } = message;
			this.session.append({
				type: "custom_message",
				customType,
				content,
				display,
				...(details !== undefined ? { details } : {}),
			});
		} else {
			this.session.appendMessage(message);
		}
	}

	private async forwardToExtensions(event: AgentEvent): Promise<void> {
		const runner = this.extensions;
		if (!runner) return;
		switch (event.type) {
			case "agent_start":
				this.turnIndex = 0;
				return;
			case "turn_start":
				await runner.emit("turn_start", { turnIndex: this.turnIndex });
				return;
			case "turn_end":
				await runner.emit("turn_end", {
					turnIndex: this.turnIndex++,
					message: event.message,
					toolResults: inCallOrder(event.message, event.toolResults),
				});
				return;
			case "message_start":
			case "message_update":
			case "message_end":
				await runner.emit(event.type, { message: event.message });
				return;
		}
	}

	private async flushPending(): Promise<void> {
		for (const entry of this.pending) {
			const previous = this.session.context().model;
			this.session.append(entry);
			if (entry.type === "custom_message") {
				this.agent.state.messages = [...this.agent.state.messages, hostMessage(entry)];
			}
			if (entry.type === "model_change") {
				await this.extensions?.emit("model_change", { model: this.model, previousModel: previous });
			}
		}
		this.pending = [];
	}

	private pushHiddenMessage(message: HiddenMessage): void {
		this.session.append({ type: "custom_message", ...message, display: false });
		this.agent.state.messages = [...this.agent.state.messages, hostMessage(message)];
	}

	private collectTools(own: AgentTool[]): AgentTool[] {
		const tools = [...own];
		for (const tool of this.extensions?.tools ?? []) {
			if (tools.some((existing) => existing.name === tool.name)) {
				this.extensions?.report({
					path: this.extensions.toolPath(tool) ?? "(extension)",
					phase: "registerTool",
					message: `a tool named "${tool.name}" already exists; the second one was left out`,
				});
				continue;
			}
			tools.push(tool);
		}
		return tools;
	}

	private notify(notice: SessionNotice): void {
		for (const listener of this.noticeListeners) listener(notice);
	}
}

function hostMessage(message: HiddenMessage): AgentMessage {
	return {
		role: "host",
		customType: message.customType,
		content: message.content,
		display: false,
		details: message.details,
		timestamp: Date.now(),
	};
}

function fullOutputPath(details: unknown): string | undefined {
	const path = (details as { fullOutputPath?: unknown } | undefined)?.fullOutputPath;
	return typeof path === "string" ? path : undefined;
}

/** Tool results in the order the assistant message called them (tools may finish out of order). */
function inCallOrder(message: AgentMessage, results: ToolResultMessage[]): ToolResultMessage[] {
	if (message.role !== "assistant") return results;
	const order = message.content.filter((part) => part.type === "toolCall").map((part) => part.id);
	const rank = (result: ToolResultMessage) => {
		const index = order.indexOf(result.toolCallId);
		return index < 0 ? order.length : index;
	};
	return [...results].sort((a, b) => rank(a) - rank(b));
}
