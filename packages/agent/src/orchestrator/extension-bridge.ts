import type {
	AfterToolCallContext,
	AfterToolCallResult,
	AgentEvent,
	AgentMessage,
	AgentTool,
	BeforeToolCallContext,
	BeforeToolCallResult,
} from "@mariozechner/pi-agent-core";
import type { Api, Model, ToolResultMessage } from "@mariozechner/pi-ai";
import type { HostRequestHandler } from "prime-agent-kernel";
import { contextTokens } from "../compaction/index.js";
import type { ContextUsage, Delivery, ExtensionHost, ExtensionRunner, HiddenMessage } from "../extensions/index.js";
import type { Session, SessionEntry } from "../session/index.js";
import type { SessionKernel } from "../tools/index.js";

/** What the bridge needs from the running session: a narrow view, no loop internals. */
export interface BridgedSession {
	readonly session: Session;
	/** The model of the next provider call. */
	model(): Model<Api>;
	contextWindow(): number;
	isRunning(): boolean;
	readonly kernel?: SessionKernel;
	/** Queue a hidden message with the next prompt (`nextTurn`) or into the running turn. */
	deliver(message: HiddenMessage, how: Delivery): void;
	/** Compact at the next turn boundary, or now (awaited like a command) when idle. */
	requestCompaction(customInstructions?: string): void;
}

/** How a session starts, as told to extensions. */
export interface StartAnnouncement {
	reason: "new" | "resume" | "fork";
	forkedFrom?: { sessionFile: string; atEntryId: string | null };
	branchedFrom?: { leafId: string | null; previousLeafId: string | null };
}

/**
 * The one place the session and its extensions meet: it implements the host the extension API
 * calls into, and turns loop hooks and events into extension events. Contract: every method works
 * without extensions (a runner with no handlers) and none of them throws for a failing handler
 * (the runner reports it as a problem).
 */
export class ExtensionBridge implements ExtensionHost {
	private turnIndex = 0;

	constructor(
		readonly runner: ExtensionRunner | undefined,
		private readonly host: BridgedSession,
	) {
		runner?.bind(this);
	}

	// ExtensionHost: what extensions call.

	appendEntry(customType: string, data: unknown): string {
		return this.host.session.appendCustom(customType, data);
	}

	keepSession(): void {
		this.host.session.keep();
	}

	sendMessage(message: HiddenMessage, deliverAs?: Delivery): void {
		const how = this.host.isRunning() ? (deliverAs ?? "steer") : "nextTurn";
		this.host.deliver(message, how);
	}

	getBranch(): readonly SessionEntry[] {
		return this.host.session.branch();
	}

	getModel(): Model<Api> {
		return this.host.model();
	}

	getContextUsage(): ContextUsage {
		const tokens = contextTokens(this.host.session.context().messages);
		const contextWindow = this.host.contextWindow();
		return { tokens, contextWindow, fraction: contextWindow > 0 ? tokens / contextWindow : 0 };
	}

	requestCompaction(customInstructions?: string): void {
		this.host.requestCompaction(customInstructions);
	}

	/** Without a kernel (an embedding host that gave none) there is nothing to answer. */
	onHostRequest(type: string, handler: HostRequestHandler): () => void {
		return this.host.kernel?.onHostRequest(type, handler) ?? (() => {});
	}

	addKernelStartup(code: string, options?: { pythonPath?: string[]; names?: string[] }): void {
		this.host.kernel?.addStartupCode(code, options);
	}

	// Loop hooks and events, turned into extension events.

	/** The session's tools followed by the extensions' (a clashing name is reported and left out). */
	tools(own: AgentTool[]): AgentTool[] {
		const tools = [...own];
		for (const tool of this.runner?.tools ?? []) {
			if (tools.some((existing) => existing.name === tool.name)) {
				this.runner?.report({
					path: this.runner.toolPath(tool) ?? "(extension)",
					phase: "registerTool",
					message: `a tool named "${tool.name}" already exists; the second one was left out`,
				});
				continue;
			}
			tools.push(tool);
		}
		return tools;
	}

	/**
	 * `before_agent_start`: hidden messages to add before the run, and the system prompt of this run.
	 * `prompt` is the user's text, "" for a woken run.
	 */
	async beforeAgentStart(
		prompt: string,
		systemPrompt: string,
		woken = false,
	): Promise<{ systemPrompt: string; messages: HiddenMessage[] }> {
		const messages: HiddenMessage[] = [];
		const event = { prompt, systemPrompt, woken };
		const started = await this.runner?.emit("before_agent_start", event, (result, payload) => {
			if (result?.message) messages.push(result.message);
			if (result?.systemPromptAppend)
				return { ...payload, systemPrompt: `${payload.systemPrompt}\n\n${result.systemPromptAppend}` };
			return payload;
		});
		return { systemPrompt: started?.systemPrompt ?? systemPrompt, messages };
	}

	async beforeToolCall({ toolCall, args }: BeforeToolCallContext): Promise<BeforeToolCallResult | undefined> {
		return this.runner?.toolCall({
			toolCallId: toolCall.id,
			toolName: toolCall.name,
			input: (args ?? {}) as Record<string, unknown>,
		});
	}

	/**
	 * `tool_result`: each handler may replace content, details or the error flag. `fullOutputPath`
	 * is handed on only while the content is still the tool's own: once a handler replaced it, the
	 * complete-output file no longer stands for what the model sees.
	 */
	async afterToolCall({
		toolCall,
		args,
		result,
		isError,
	}: AfterToolCallContext): Promise<AfterToolCallResult | undefined> {
		// A tool reports a failed run (a cell that raised) in its details, keeping them intact.
		const failed = isError || (result.details as { isError?: unknown } | undefined)?.isError === true;
		if (!this.runner?.has("tool_result")) return failed ? { isError: true } : undefined;
		const final = await this.runner.emit(
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
				...(replacement?.content ? { content: replacement.content, fullOutputPath: undefined } : {}),
				...(replacement && "details" in replacement ? { details: replacement.details } : {}),
				...(typeof replacement?.isError === "boolean" ? { isError: replacement.isError } : {}),
			}),
		);
		return { content: final.content, details: final.details, isError: final.isError };
	}

	/** `context`: what this provider call sends (the transcript is never changed). */
	async transformContext(messages: AgentMessage[]): Promise<AgentMessage[]> {
		if (!this.runner?.has("context")) return messages;
		const result = await this.runner.emit("context", { messages }, (replacement, payload) =>
			Array.isArray(replacement?.messages) ? { messages: replacement.messages } : payload,
		);
		return result.messages;
	}

	/** `system_prompt`: the sections extensions append to this call's system prompt, joined (empty: none). */
	async systemPromptAppend(systemPrompt: string): Promise<string> {
		if (!this.runner?.has("system_prompt")) return "";
		const sections: string[] = [];
		await this.runner.emit("system_prompt", { systemPrompt }, (result, payload) => {
			if (typeof result?.append === "string" && result.append !== "") sections.push(result.append);
			return payload;
		});
		return sections.join("\n\n");
	}

	/** Loop events as extension events (`turn_start`, `turn_end`, `message_*`). */
	async forward(event: AgentEvent): Promise<void> {
		const runner = this.runner;
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

	/** The session events of start-up (the session is ready, before any prompt). */
	async announceStart(event: StartAnnouncement): Promise<void> {
		const runner = this.runner;
		if (!runner) return;
		const { session } = this.host;
		await runner.emit("session_start", { reason: event.reason, sessionId: session.id, sessionFile: session.path });
		if (event.forkedFrom)
			await runner.emit("session_fork", {
				fromSessionFile: event.forkedFrom.sessionFile,
				atEntryId: event.forkedFrom.atEntryId,
			});
		if (event.reason === "resume") await runner.emit("session_switch", { sessionFile: session.path });
		if (event.branchedFrom) await runner.emit("session_tree", event.branchedFrom);
	}
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
