import { Agent, type AgentEvent, type AgentTool, type ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { Api, AssistantMessage, Model } from "@mariozechner/pi-ai";
import { type NewEntry, type Session, toLlmMessages } from "../session/index.js";

export interface AgentSessionOptions {
	model: Model<Api>;
	/** Key for the model's provider (resolved before the session starts). */
	apiKey: string;
	systemPrompt: string;
	tools: AgentTool[];
	thinkingLevel?: ThinkingLevel;
}

/** How one prompt ended. */
export interface RunOutcome {
	status: "ok" | "error" | "aborted";
	/** The provider's or loop's message when `status` is `error`. */
	errorMessage?: string;
	/** The last assistant message of the run, if any. */
	lastAssistant?: AssistantMessage;
}

/**
 * Wires one session to the agent loop: the context is rebuilt from the session's active branch,
 * every message the loop finishes is appended to the session as it happens, and model changes are
 * recorded. It owns no capability itself; capabilities hook in through the loop's functions.
 */
export class AgentSession {
	readonly agent: Agent;
	private readonly listeners = new Set<(event: AgentEvent) => void>();
	/** Entries recorded only once a prompt is sent, so opening a session and leaving changes nothing. */
	private pending: NewEntry[] = [];

	constructor(
		readonly session: Session,
		options: AgentSessionOptions,
	) {
		const context = session.context();
		const thinkingLevel = options.thinkingLevel ?? context.thinkingLevel ?? "off";
		this.agent = new Agent({
			initialState: {
				systemPrompt: options.systemPrompt,
				model: options.model,
				thinkingLevel,
				tools: options.tools,
				messages: context.messages,
			},
			convertToLlm: toLlmMessages,
			getApiKey: () => options.apiKey,
			sessionId: session.id,
			toolExecution: "sequential",
			// A tool reports a failed run (a cell that raised) in its details, keeping them intact.
			afterToolCall: async ({ result }) =>
				(result.details as { isError?: unknown } | undefined)?.isError === true ? { isError: true } : undefined,
		});
		const recorded = context.model;
		if (!recorded || recorded.provider !== options.model.provider || recorded.modelId !== options.model.id) {
			this.pending.push({ type: "model_change", provider: options.model.provider, modelId: options.model.id });
		}
		if (thinkingLevel !== (context.thinkingLevel ?? "off")) {
			this.pending.push({ type: "thinking_level_change", thinkingLevel });
		}
		this.agent.subscribe((event) => {
			if (event.type === "message_end") session.appendMessage(event.message);
			for (const listener of this.listeners) listener(event);
		});
	}

	get model(): Model<Api> {
		return this.agent.state.model;
	}

	/** Listen to every loop event (after it was recorded in the session). */
	subscribe(listener: (event: AgentEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/**
	 * Add a message the model sees just before the next prompt (recorded then, as a custom message).
	 */
	addHostNote(customType: string, text: string): void {
		this.pending.push({ type: "custom_message", customType, content: text, display: false });
	}

	/** Run one user prompt to the end of the agent's turn. Never throws for model failures. */
	async prompt(text: string): Promise<RunOutcome> {
		this.flushPending();
		const before = this.agent.state.messages.length;
		await this.agent.prompt(text);
		const added = this.agent.state.messages.slice(before);
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

	private flushPending(): void {
		for (const entry of this.pending) {
			this.session.append(entry);
			if (entry.type === "custom_message") {
				const { customType, content, display } = entry;
				const note = { role: "host" as const, customType, content, display, timestamp: Date.now() };
				this.agent.state.messages = [...this.agent.state.messages, note];
			}
		}
		this.pending = [];
	}

	/** Abort the whole run (the running cell is interrupted too). */
	abort(): void {
		this.agent.abort();
	}

	get running(): boolean {
		return this.agent.state.isStreaming;
	}
}
