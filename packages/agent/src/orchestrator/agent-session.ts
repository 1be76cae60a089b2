import { Agent, type AgentEvent, type AgentMessage } from "@mariozechner/pi-agent-core";
import { type Api, type AssistantMessage, isContextOverflow, type Model } from "@mariozechner/pi-ai";
import {
	type CompactionSettings,
	type CompactResult,
	compactSession,
	contextTokens,
	DEFAULT_COMPACTION_SETTINGS,
	fitOutputToWindow,
	requestTokens,
	shouldCompact,
} from "../compaction/index.js";
import { UserError } from "../errors.js";
import type { CompactionReason, Delivery, ExtensionRunner, HiddenMessage } from "../extensions/index.js";
import { DiskWriteError } from "../home/index.js";
import { parseOutputRefusal } from "../providers/index.js";
import { type NewEntry, type Session, toLlmMessages } from "../session/index.js";
import { IPYTHON_TOOL_NAME } from "../tools/index.js";
import { callSignal, streamWithCallSignal } from "./call-signal.js";
import { CompactionScheduler } from "./compaction-scheduler.js";
import { refuseCutOffCall } from "./cut-off-call.js";
import { ExtensionBridge, type StartAnnouncement } from "./extension-bridge.js";
import { refuseOversizeHistory, refuseOversizePrompt } from "./oversize-message.js";
import { PromptBoundaries } from "./prompt-boundary.js";
import { type RunOutcome, runOutcome } from "./run-outcome.js";
import { type RunSupervisor, type StopVerdict, wouldStop } from "./run-supervisor.js";
import type { AgentSessionOptions, SessionNotice } from "./session-options.js";
import { isResting, type LoopRun, type SessionState, SessionStates } from "./session-state.js";
import { parseSlashCommand, promptText } from "./slash-commands.js";
import { hostMessage, recordMessage } from "./transcript.js";
import { WakeScheduler } from "./wake-scheduler.js";

export type { AgentSessionOptions, SessionNotice } from "./session-options.js";

/**
 * Wires one session to the agent loop: the context is rebuilt from the session's active branch,
 * every message the loop finishes is appended to the session as it happens, and model changes are
 * recorded. Extensions meet the session through the `ExtensionBridge`; compactions are timed by
 * the `CompactionScheduler`: at turn boundaries (before a provider call) when the context nears
 * the window or one was asked for, and after a context-overflow error (then the request is retried once).
 */
export class AgentSession {
	readonly agent: Agent;
	readonly extensions: ExtensionRunner | undefined;
	private readonly bridge: ExtensionBridge;
	private readonly compactions: CompactionScheduler;
	private readonly listeners = new Set<(event: AgentEvent) => void>();
	private readonly noticeListeners = new Set<(notice: SessionNotice) => void>();
	/** Entries recorded only once a prompt is sent, so opening a session and leaving changes nothing. */
	private pending: NewEntry[] = [];
	/** What each run's system prompt starts from; a host may change it before the first run (where the kernel runs). */
	baseSystemPrompt: string;
	/** Where a run's system prompt changed, recorded in the session. */
	private readonly boundaries: PromptBoundaries;
	private readonly compactionSettings: CompactionSettings;
	/** What extensions append to the system prompt of the next provider call (`system_prompt`). */
	private promptAppend = "";
	/** Tokens the next provider call's prompt holds (see `beforeProviderCall`): its answer is sized to the window left. */
	private callPromptTokens = 0;
	/** What the session is doing (see `SessionState`); every move goes through it. */
	private readonly states = new SessionStates();
	/** Turns started by delivered messages (sub-agent notices, agent messages). */
	private readonly wakes: WakeScheduler;
	/** Goals and autonomous mode: what happens when the model would stop. */
	private supervisor: RunSupervisor | undefined;

	constructor(
		readonly session: Session,
		private readonly options: AgentSessionOptions,
	) {
		this.extensions = options.extensions;
		this.wakes = new WakeScheduler(
			{
				hasQueued: () => this.agent.hasQueuedMessages(),
				hasHistory: () => this.agent.state.messages.length > 0,
				runQueued: async () => {
					await this.compactions.settled();
					await this.flushPending();
					await this.startRun("", true);
					return this.run(() => this.agent.continue());
				},
			},
			this.states,
		);
		this.baseSystemPrompt = options.systemPrompt;
		this.boundaries = new PromptBoundaries(session);
		this.compactionSettings = options.compaction ?? DEFAULT_COMPACTION_SETTINGS;
		this.compactions = new CompactionScheduler(
			(reason, instructions) => this.compact(reason, instructions),
			() => this.running,
		);
		this.bridge = new ExtensionBridge(options.extensions, {
			session,
			kernel: options.kernel,
			model: () => this.model,
			contextWindow: () => this.model.contextWindow,
			isRunning: () => this.running,
			deliver: (message, how) => this.deliver(message, how),
			requestCompaction: (instructions) => this.requestCompaction(instructions),
		});
		const context = session.context();
		const thinkingLevel = options.thinkingLevel ?? context.thinkingLevel ?? "off";
		const tools = this.bridge.tools(options.tools);
		const toolNames = options.toolNames;
		this.agent = new Agent({
			initialState: {
				systemPrompt: options.systemPrompt,
				model: options.model,
				thinkingLevel,
				tools: toolNames ? tools.filter((tool) => toolNames.includes(tool.name)) : tools,
				messages: context.messages,
			},
			convertToLlm: toLlmMessages,
			getApiKey: () => this.apiKey(),
			sessionId: session.id,
			// Sections extensions append (the harness index) follow the run's system prompt on every call;
			// the answer asked for is what the window leaves after the prompt.
			streamFn: (model, context, options) =>
				streamWithCallSignal(
					fitOutputToWindow(model, this.callPromptTokens, this.compactionSettings),
					this.promptAppend ? { ...context, systemPrompt: `${context.systemPrompt}\n\n${this.promptAppend}` } : context,
					options,
				),
			toolExecution: "sequential",
			// Everything queued when a call starts (notices, agent messages, steering) goes into that one call.
			steeringMode: "all",
			followUpMode: "all",
			transformContext: (messages) => this.beforeProviderCall(messages),
			beforeToolCall: async (context) => refuseCutOffCall(context) ?? this.bridge.beforeToolCall(context),
			afterToolCall: async (context) => {
				const result = await this.bridge.afterToolCall(context);
				const kernelFailure = this.options.kernel?.setupFailure;
				if (context.toolCall.name === IPYTHON_TOOL_NAME && kernelFailure && !this.states.loop?.kernelFailure)
					this.states.noteLoop({ kernelFailure });
				// A limit was reached, or no cell can run: this turn's tools finish, and no further model call is made.
				return this.supervisor?.shouldEndRun?.() || this.states.loop?.kernelFailure
					? { ...result, terminate: true }
					: result;
			},
		});
		const recorded = context.model;
		if (!recorded || recorded.provider !== options.model.provider || recorded.modelId !== options.model.id) {
			this.pending.push({ type: "model_change", provider: options.model.provider, modelId: options.model.id });
		}
		if (thinkingLevel !== (context.thinkingLevel ?? "off")) {
			this.pending.push({ type: "thinking_level_change", thinkingLevel });
		}
		this.agent.subscribe(async (event, signal) => {
			if (event.type === "message_end") this.recordOrStop(event.message);
			for (const listener of this.listeners) listener(event);
			await this.bridge.forward(event);
			if (event.type === "turn_end" && event.message.role === "assistant") {
				const message = event.message as AssistantMessage;
				if (this.supervisor && wouldStop(message) && !this.agent.hasQueuedMessages())
					this.apply(await this.askSupervisor(message, signal));
			}
		});
		this.extensions?.onProblem((problem) => this.notify({ type: "extension_problem", ...problem }));
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

	/** Take back the notes of `customType` added with `addHostNote` and not sent yet. */
	withdrawHostNotes(customType: string): void {
		this.pending = this.pending.filter((entry) => entry.type !== "custom_message" || entry.customType !== customType);
	}

	/** Names of the slash commands a prompt may start with (`/compact` and the extensions'). */
	get commandNames(): string[] {
		return [...new Set(["compact", ...(this.extensions?.commandNames ?? [])])].sort();
	}

	/**
	 * Run one user prompt to the end of the agent's turn. Never throws for model failures; throws a
	 * `UserError` when the provider has no key. A prompt `/name args` runs the slash command `name`
	 * instead (`/compact` or an extension's); an unknown name is an error, not a prompt.
	 */
	async prompt(input: string): Promise<RunOutcome> {
		// After a woken turn or a resume; the prompt's own run reaches its stop and asks the supervisor again.
		while (!isResting(this.states.state)) await this.whenIdle();
		this.states.beginPrompt();
		try {
			return await this.promptNow(input);
		} finally {
			this.states.endTurn("prompting");
			this.wakes.kick(); // for messages that arrived meanwhile
		}
	}

	/**
	 * A message from outside the user's prompt (a sub-agent's notice, an agent message): a running
	 * turn takes it at its next turn boundary; an idle session starts a turn for it. Never waits for
	 * that turn, so two busy sessions messaging each other cannot deadlock.
	 */
	deliverExternal(message: HiddenMessage): void {
		this.agent.steer(hostMessage(message));
		this.wakes.kick();
	}

	/** Resolves once no prompt, woken turn or resume of a held continuation is under way. */
	whenIdle(): Promise<void> {
		return this.states.whenResting();
	}

	/** What the session is doing now (`onState` hears each change). */
	get state(): SessionState {
		return this.states.state;
	}

	onState(listener: (state: SessionState) => void): () => void {
		return this.states.onChange(listener);
	}

	/** False while a prompt, a woken turn or a resume runs, or a delivered message waits for a turn (held is idle). */
	isIdle(): boolean {
		return isResting(this.states.state) && !this.wakes.waiting && !this.running;
	}

	/**
	 * Listen to each moment the session may have become idle: its state came to rest (idle or held).
	 * The listener asks `isIdle()` again (a delivered message may be about to wake it).
	 */
	onIdle(listener: () => void): () => void {
		return this.states.onChange((state) => {
			if (isResting(state)) listener();
		});
	}

	/** Listen to the outcome of every turn started by a delivered message. */
	onWakeOutcome(listener: (outcome: RunOutcome) => void): () => void {
		return this.wakes.onOutcome(listener);
	}

	private async promptNow(input: string): Promise<RunOutcome> {
		await this.compactions.settled();
		const command = parseSlashCommand(input);
		if (command) return this.runCommand(command.name, command.args);
		const text = promptText(input);
		// Nothing is recorded or sent for a message the model's window cannot hold.
		refuseOversizePrompt(text, this.model);
		refuseOversizeHistory(this.session, this.model);
		this.apiKey();
		await this.flushPending();
		await this.startRun(text, false);
		let outcome = await this.run(() => this.agent.prompt(text), true);
		// A refused output size is no overflow: compacting would not change it (the outcome names it).
		if (
			outcome.status === "error" &&
			outcome.lastAssistant &&
			isContextOverflow(outcome.lastAssistant, this.model.contextWindow) &&
			!parseOutputRefusal(outcome.lastAssistant.errorMessage)
		) {
			outcome = await this.retryAfterOverflow(outcome);
		}
		// Asked for during the run's last turn, after its last provider call.
		const late = this.compactions.takeRequest();
		if (late && outcome.status !== "aborted") await this.compact(late.reason, late.customInstructions);
		return outcome;
	}

	/**
	 * Before every run, a prompt's or a woken one's: extensions' `before_agent_start` gives the run
	 * its system prompt and hidden messages. One path for both, so a woken turn keeps the sections a
	 * prompted one has (Prime Context's policy, the skills index, MCP) and the provider's cached prefix.
	 */
	private async startRun(prompt: string, woken: boolean): Promise<void> {
		const started = await this.bridge.beforeAgentStart(prompt, this.baseSystemPrompt, woken);
		for (const message of started.messages) this.pushHiddenMessage(message);
		this.agent.state.systemPrompt = started.systemPrompt;
		this.boundaries.note(started.systemPrompt);
	}

	/**
	 * Compact now: `/compact`, a host, or at a turn boundary inside a run (it goes on from the rebuilt
	 * context). Failures are reported as a `compaction_failed` notice and returned; nothing changes then.
	 */
	async compact(reason: CompactionReason = "command", customInstructions?: string): Promise<CompactResult | undefined> {
		// The summary calls get their own signal, as every model call does (see `callSignal`).
		const { signal, release } = callSignal(this.agent.signal);
		try {
			const result = await compactSession({
				session: this.session,
				model: this.model,
				apiKey: this.apiKey(),
				kernel: this.options.kernel,
				extensions: this.extensions,
				settings: this.compactionSettings,
				reason,
				customInstructions,
				signal,
				onStart: () => this.notify({ type: "compaction_start", reason }),
			});
			if (result.status === "compacted") {
				if (this.running) this.states.noteLoop({ compacted: true });
				else this.agent.state.messages = this.session.context().messages;
			}
			// The automatic trigger finding nothing to summarise is not news; it retries at each call.
			if (result.status !== "nothing" || reason !== "threshold")
				this.notify({ type: "compaction_end", reason, result });
			return result;
		} catch (error) {
			this.notify({ type: "compaction_failed", reason, message: (error as Error).message });
			return undefined;
		} finally {
			release();
		}
	}

	/**
	 * Ask for a compaction: during a run at the next turn boundary; when idle it starts at once and
	 * the next prompt, command or `shutdown()` waits for it.
	 */
	requestCompaction(customInstructions?: string, reason: CompactionReason = "extension"): void {
		this.compactions.request(reason, customInstructions);
	}

	/**
	 * Abort the whole run (the running cell is interrupted too). Messages delivered afterwards (a
	 * sub-agent's notice) wait for the next prompt instead of starting a turn of their own.
	 * Extensions hear `session_abort`, run or no run.
	 */
	abort(): void {
		this.states.pause();
		this.agent.abort();
		// Work extensions do beside the run (a background harness refinement) stops too.
		void this.extensions?.emit("session_abort", { sessionId: this.session.id });
	}

	get running(): boolean {
		return this.agent.state.isStreaming;
	}

	/**
	 * Goals and autonomous mode decide what happens when the model would stop (one supervisor; a
	 * later call replaces it).
	 */
	setSupervisor(supervisor: RunSupervisor | undefined): void {
		this.supervisor = supervisor;
	}

	/** The supervisor is waiting for sub-agents to settle before it continues the work. */
	get continuationHeld(): boolean {
		return this.states.state.phase === "held";
	}

	/**
	 * Ask the supervisor again about a held continuation once sub-agents have settled and the session
	 * is idle: a continuation then starts a turn (as a delivered message does).
	 */
	async resumeHeld(): Promise<void> {
		if (!this.continuationHeld || !this.isIdle()) return;
		const signal = this.states.beginResume();
		const last = this.agent.state.messages.findLast((message) => message.role === "assistant") as
			| AssistantMessage
			| undefined;
		let verdict: StopVerdict;
		try {
			verdict = await this.askSupervisor(last, signal);
		} finally {
			// An abort meanwhile already moved the session on (and paused wakes).
			this.states.endResume(signal, verdict !== undefined && "hold" in verdict);
		}
		if (!signal.aborted && verdict && "continueWith" in verdict) this.deliverExternal(verdict.continueWith);
		// Messages delivered during the resume start their turn now.
		else this.wakes.kick();
	}

	/** Emit the session events of start-up to extensions (the session is ready, before any prompt). */
	announceStart(event: StartAnnouncement): Promise<void> {
		return this.bridge.announceStart(event);
	}

	/** Finish queued compactions, then tell extensions the session is closing (before the kernel shuts down). */
	async shutdown(): Promise<void> {
		// No new turn starts for a late message; one already running is stopped.
		const waking = this.states.state.phase === "waking";
		this.states.pause();
		if (waking) {
			this.agent.abort();
			await this.whenIdle();
		}
		await this.compactions.settled();
		await this.extensions?.emit("session_shutdown", { sessionId: this.session.id });
	}

	private async askSupervisor(message: AssistantMessage | undefined, signal: AbortSignal): Promise<StopVerdict> {
		try {
			return await this.supervisor?.onWouldStop({ message, signal });
		} catch (error) {
			this.notify({
				type: "extension_problem",
				path: "run supervisor",
				phase: "stop",
				message: (error as Error).message,
			});
			return undefined;
		}
	}

	/** Carry out a supervisor's verdict at a stop inside a run: hold, or go on with a follow-up. */
	private apply(verdict: StopVerdict): void {
		this.states.setHold(verdict !== undefined && "hold" in verdict);
		if (verdict && "continueWith" in verdict) this.agent.followUp(hostMessage(verdict.continueWith));
	}

	private apiKey(): string {
		const key = this.options.apiKey;
		return typeof key === "string" ? key : key();
	}

	/**
	 * `answered`: the run answers a prompt, so a run whose every answer is empty failed (a wake-up or
	 * a continuation may end with nothing to say).
	 */
	private async run(start: () => Promise<void>, answered = false): Promise<RunOutcome> {
		const before = this.agent.state.messages.length;
		this.states.beginLoop();
		let loop: LoopRun;
		try {
			await start();
		} finally {
			loop = this.states.endLoop();
			// The loop kept every message; after a compaction the session's rebuilt context is the truth.
			if (loop.compacted) this.agent.state.messages = this.session.context().messages;
		}
		const messages = this.agent.state.messages;
		return runOutcome(messages.slice(Math.min(before, messages.length)), {
			writeFailure: loop.writeFailure,
			kernelFailure: loop.kernelFailure,
			loopError: this.agent.state.errorMessage,
			// After a compaction the run's messages are no longer those past `before`: its answers are unknown.
			emptyFails: answered && !loop.compacted,
		});
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
		const command = this.extensions?.command(name);
		if (!command && name !== "compact") {
			const message = `Unknown command /${name}. Commands: ${this.commandNames.map((known) => `/${known}`).join(", ")}. To send text that starts with a slash to the model, begin it with two: //${name}.`;
			return { status: "error", errorMessage: message, command: { name, message, unknown: true } };
		}
		if (!command) return this.runCompactCommand(args);
		try {
			const answer = await command.handler(args);
			// A compaction the command asked for is part of the command.
			await this.compactions.settled();
			return { status: "ok", command: typeof answer === "string" ? { name, message: answer } : { name } };
		} catch (error) {
			// A command that needs the model and has no key fails as a prompt would (the key's hint, exit 3).
			if (error instanceof UserError) throw error;
			const message = `The command /${name} failed: ${(error as Error).message}`;
			return { status: "error", errorMessage: message, command: { name, message } };
		}
	}

	private async runCompactCommand(args: string): Promise<RunOutcome> {
		this.apiKey();
		await this.flushPending();
		let failure = "";
		const stop = this.onNotice((notice) => {
			if (notice.type === "compaction_failed") failure = notice.message;
		});
		const result = await this.compact("command", args || undefined).finally(stop);
		if (!result) {
			const message = `Compaction failed (${failure}); the conversation is unchanged. Retry /compact, or go on: it compacts again when the context nears the window.`;
			return { status: "error", errorMessage: message, command: { name: "compact", message } };
		}
		const message =
			result.status === "compacted"
				? `Compacted: ${result.entry.tokensBefore.toLocaleString("en-US")} tokens before; the kernel kept its state.`
				: result.message;
		return { status: "ok", command: { name: "compact", message } };
	}

	/**
	 * Before every provider call: compact when due or asked for (a turn boundary), then let
	 * extensions rewrite what is sent.
	 */
	private async beforeProviderCall(messages: AgentMessage[]): Promise<AgentMessage[]> {
		let current = messages;
		const request = this.compactions.takeRequest();
		const due = shouldCompact(contextTokens(current), this.model.contextWindow, this.compactionSettings);
		// compact() reports its own failures; the call then goes on with the uncompacted context.
		if (request || due) await this.compact(request?.reason ?? "threshold", request?.customInstructions);
		if (this.states.loop?.compacted) current = this.session.context().messages;
		const transformed = await this.bridge.transformContext(current);
		const systemPrompt = this.agent.state.systemPrompt;
		this.promptAppend = await this.bridge.systemPromptAppend(systemPrompt);
		this.callPromptTokens = requestTokens(
			transformed,
			this.promptAppend ? `${systemPrompt}\n\n${this.promptAppend}` : systemPrompt,
			this.agent.state.tools,
		);
		return transformed;
	}

	/** Record a message; one the disk refused stops the run (the loop's failure), remembered for its outcome. */
	private recordOrStop(message: AgentMessage): void {
		try {
			recordMessage(
				this.session,
				message,
				this.agent.state.tools.map((tool) => tool.name),
			);
		} catch (error) {
			if (error instanceof DiskWriteError) this.states.noteLoop({ writeFailure: error });
			throw error;
		}
	}

	/** A hidden message from an extension: with the next prompt, or into the running turn. */
	private deliver(message: HiddenMessage, how: Delivery): void {
		if (how === "nextTurn" || !this.running) {
			this.pending.push({ type: "custom_message", ...message, display: false });
		} else if (how === "steer") this.agent.steer(hostMessage(message));
		else this.agent.followUp(hostMessage(message));
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

	private notify(notice: SessionNotice): void {
		for (const listener of this.noticeListeners) listener(notice);
	}
}
