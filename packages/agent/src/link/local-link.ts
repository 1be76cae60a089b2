/**
 * A `SessionLink` over a session in this process: what the terminal UI drives with
 * `PRIME_AGENT_IN_PROCESS=1`, and what a daemon worker answers its views with.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { UserMessage } from "@mariozechner/pi-ai";
import { sessionUsage } from "../children/index.js";
import { contextTokens } from "../compaction/index.js";
import { Emitter } from "../emitter.js";
import { ExitCode, UserError } from "../errors.js";
import type { GoalEvent } from "../goals/index.js";
import { describeActiveGoal, goalStopOf, longRunningOutcome } from "../modes/long-running.js";
import { describeOutcome } from "../modes/outcome.js";
import { describeRefusedRun, describeRunEnd } from "../modes/run-end.js";
import { finishRun, onSessionLines } from "../modes/run-result.js";
import { refuseOversizePrompt } from "../orchestrator/index.js";
import type { SessionEntry } from "../session/index.js";
import type { StartedSession } from "../startup/index.js";
import { InputQueue, type QueuedInput } from "./input-queue.js";
import type { LinkRunEnd, SessionEvent, SessionLine } from "./session-events.js";
import type { LinkInterrupt, LinkStatus, PromptOptions, SessionLink } from "./session-link.js";

/** How long after a cell reaches its just-started kernel a pending interrupt is sent. */
const INTERRUPT_MARGIN_MS = 300;

export function userMessage(text: string): UserMessage {
	return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}

export class LocalLink implements SessionLink {
	readonly notices: readonly string[];
	private readonly listeners = new Set<(event: SessionEvent) => void>();
	private readonly queueChanged = new Emitter<QueuedInput[]>();
	private readonly stops: (() => void)[];
	/** ipython calls under way (their kernel may still be starting). */
	private readonly ipythonCalls = new Set<string>();
	private presses = 0;
	private statusQueued = false;
	private stillBusy: ((choice: "wait" | "restart") => void) | undefined;
	/** The number of the latest still-busy question (an answer names the one it answers). */
	private question = 0;
	private closed = false;
	/** What users queued: listed in `status().queued` until it runs or the turn reads it. */
	private readonly inputs = new InputQueue(() => {
		this.queueChanged.emit(this.inputs.list());
		this.statusChanged();
	});
	/** Runs go one after another, in the order they were asked for. */
	private runs: Promise<unknown> = Promise.resolve();
	/** Runs asked for and not yet ended (the one under way included). */
	private pendingRuns = 0;
	/** Aborts the wait of the settling run under way (`settle`) when the run is stopped. */
	private settling: AbortController | undefined;

	/** `extraNotices`: said after the session's own (and its open goal's). */
	constructor(
		private readonly started: StartedSession,
		extraNotices: readonly string[] = [],
	) {
		const goal = describeActiveGoal(started);
		this.notices = [...started.notices, ...(goal ? [goal] : []), ...extraNotices];
		const { agentSession, kernel } = started;
		this.stops = [
			onSessionLines(started, (line) => this.onLine(line)),
			started.onChildUsage(() => this.statusChanged()),
			agentSession.onWakeOutcome((outcome) => this.emit({ type: "run_end", ...describeRunEnd(started, outcome) })),
		];
		// A cell that ignores the interrupt: a view is asked whether to wait or restart; with none, restart.
		kernel.onStillBusy = () =>
			new Promise((resolve) => {
				if (this.listeners.size === 0) return resolve("restart");
				this.stillBusy = resolve;
				this.emit({ type: "still_busy", question: ++this.question });
			});
	}

	get agentKey(): string | undefined {
		return undefined;
	}

	get resumed(): boolean {
		return this.started.resumed;
	}

	status(): LinkStatus {
		const { agentSession, session, children, goals, kernel, extensions } = this.started;
		const usage = sessionUsage(session.entries).total;
		const model = agentSession.model;
		return {
			session: {
				id: session.id,
				path: session.path,
				cwd: session.cwd,
				persisted: session.persisted,
				leafId: session.leafId,
			},
			model: {
				provider: model.provider,
				id: model.id,
				...(model.baseUrl ? { baseUrl: model.baseUrl } : {}),
				contextWindow: model.contextWindow,
			},
			contextTokens: contextTokens(agentSession.agent.state.messages),
			totalTokens: usage.totalTokens,
			cost: usage.cost.total,
			runningChildren: children.list().filter((child) => child.status === "running" || child.status === "starting")
				.length,
			running: !agentSession.isIdle() || this.pendingRuns > 0,
			queued: this.inputs.list(),
			...(goals.active() ? { goal: goals.active()?.objective } : {}),
			kernelStarted: kernel.started,
			kernelBusy: kernel.busy,
			commands: agentSession.commandNames.map((name) => {
				const command = extensions.command(name);
				const description = name === "compact" ? "summarise the older conversation now" : command?.description;
				return {
					name,
					...(description ? { description } : {}),
					...(command?.arguments?.length ? { arguments: [...command.arguments] } : {}),
				};
			}),
		};
	}

	subscribe(listener: (event: SessionEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/**
	 * Hear every change of what is queued, at once and with the whole list (not once per burst, as
	 * `status` events are): what a daemon worker keeps on disk. Closing the session empties it.
	 */
	onQueueChange(listener: (queued: QueuedInput[]) => void): () => void {
		return this.queueChanged.on(listener);
	}

	async prompt(text: string, options: PromptOptions = {}): Promise<LinkRunEnd> {
		const end = await this.inTurn(text, () => this.run(text, options));
		return (
			end ?? {
				status: "aborted",
				exitCode: ExitCode.interrupted,
				errorMessage: "The session closed before this prompt ran.",
			}
		);
	}

	steer(text: string): Promise<void> {
		return this.deliver(text, "steer");
	}

	followUp(text: string): Promise<void> {
		return this.deliver(text, "follow_up");
	}

	async queue(text: string): Promise<void> {
		void this.prompt(text).then((end) => this.emit({ type: "run_end", ...end }));
	}

	/**
	 * Run `work` once every run asked for before it has ended; until it starts, `text` is listed in
	 * `queued` (a view that leaves meanwhile does not take it away). Resolves `undefined`, with
	 * nothing run, when the session closes first.
	 */
	inTurn<T>(text: string, work: () => Promise<T>): Promise<T | undefined> {
		this.pendingRuns++;
		const started = this.inputs.add({ kind: "prompt", text });
		const run = this.runs.then(async () => {
			started();
			if (this.closed) return undefined;
			return work();
		});
		const settled = run.finally(() => {
			this.pendingRuns--;
			this.statusChanged();
		});
		this.runs = settled.catch(() => {});
		return settled;
	}

	/**
	 * A message for the running turn (`steer`: after the current step; `follow_up`: after the turn),
	 * listed in `queued` until the turn reads it.
	 */
	queueMessage(text: string, kind: "steer" | "follow_up"): void {
		const { agent, model } = this.started.agentSession;
		refuseOversizePrompt(text, model);
		const message = userMessage(text);
		this.inputs.add({ kind, text }, message);
		if (kind === "steer") agent.steer(message);
		else agent.followUp(message);
	}

	/**
	 * Run `text` now (the caller keeps runs in order: `inTurn`) and describe its end; a prompt the
	 * session refused (a user error) ends as refused.
	 */
	async run(text: string, options: PromptOptions = {}): Promise<LinkRunEnd> {
		const { started } = this;
		const settling = new AbortController();
		this.settling = settling;
		let goalStop: GoalEvent | undefined;
		const stopGoals = started.goals.onEvent((event) => {
			goalStop = goalStopOf(event) ?? goalStop;
		});
		this.statusChanged();
		try {
			const first = await started.agentSession.prompt(text);
			const { outcome, report } = options.settle
				? await finishRun(started, first, settling.signal, () => goalStop)
				: { outcome: first, report: longRunningOutcome(started, first, describeOutcome(first, started), goalStop) };
			return describeRunEnd(started, outcome, report);
		} catch (error) {
			return describeRefusedRun(error);
		} finally {
			stopGoals();
			if (this.settling === settling) this.settling = undefined;
			this.presses = 0;
			this.statusChanged();
		}
	}

	/** Into the running turn; with none running, a prompt of its own whose end every view hears. */
	private async deliver(text: string, kind: "steer" | "follow_up"): Promise<void> {
		if (!this.started.agentSession.running) {
			void this.prompt(text).then((end) => this.emit({ type: "run_end", ...end }));
			return;
		}
		this.queueMessage(text, kind);
	}

	async interrupt(stop = false): Promise<LinkInterrupt> {
		const { kernel } = this.started;
		if (stop) {
			kernel.interruptCell();
			this.stopRun();
			return "run";
		}
		this.presses++;
		if (this.presses === 1 && kernel.interruptCell()) return "cell";
		if (this.presses === 1 && this.ipythonCalls.size > 0) {
			// The cell is called but its kernel has not started running it yet: once it runs (after a
			// short margin, so that the interrupt does not reach the kernel before the cell and get lost),
			// it is interrupted.
			const retry = () => {
				if (this.presses !== 1 || this.ipythonCalls.size === 0) return;
				if (kernel.busy) setTimeout(() => kernel.interruptCell(), INTERRUPT_MARGIN_MS);
				else setTimeout(retry, 20);
			};
			setTimeout(retry, 20);
			return "pending";
		}
		this.stopRun();
		return "run";
	}

	/** Stop the run under way: its turn, and a one-shot run's wait for its sub-agents. */
	private stopRun(): void {
		this.started.agentSession.abort();
		this.settling?.abort();
	}

	async history(): Promise<AgentMessage[]> {
		return this.started.session.context().messages;
	}

	async tree(): Promise<{ entries: SessionEntry[]; leafId: string | null }> {
		const { session } = this.started;
		return { entries: [...session.entries], leafId: session.leafId };
	}

	async branch(leafId: string | null): Promise<void> {
		const { session, agentSession, extensions } = this.started;
		if (!agentSession.isIdle())
			throw new UserError(
				"The agent is working; the conversation cannot move to another entry now.",
				"Wait for the turn to end (or stop it with Ctrl-C twice), then pick the entry again.",
			);
		const previous = session.leafId;
		session.branchFrom(leafId);
		agentSession.agent.state.messages = session.context().messages;
		await extensions.emit("session_tree", { leafId, previousLeafId: previous });
		// Every view lays the conversation out again from the new entry.
		this.emit({ type: "branched", leafId });
		this.statusChanged();
	}

	async readArchive(id: string, start: number, end: number): Promise<string> {
		const command = this.started.extensions.command("pc");
		if (!command)
			throw new UserError("Prime Context is not loaded in this session.", "Its archive cannot be read from here.");
		const answer = await command.handler(`read ${id} ${start}:${end}`);
		return typeof answer === "string" ? answer : "";
	}

	async checkModel(ref: string): Promise<string> {
		return this.started.checkModel(ref);
	}

	answerStillBusy(choice: "wait" | "restart", question?: number): void {
		// An answer to an earlier question (another view answered it first) is not this one's.
		if (!this.stillBusy || (question !== undefined && question !== this.question)) return;
		const resolve = this.stillBusy;
		this.stillBusy = undefined;
		resolve(choice);
		this.emit({ type: "still_busy_answered", question: this.question, choice });
	}

	/** Stop listening and stop a running turn; says how to resume the session. */
	async close(): Promise<string> {
		if (!this.closed) {
			this.closed = true;
			// What was queued does not outlive the session (runs not started yet start nothing).
			this.inputs.clear();
			this.answerStillBusy("restart");
			for (const stop of this.stops) stop();
			this.listeners.clear();
			this.started.kernel.onStillBusy = undefined;
			const { agentSession } = this.started;
			if (agentSession.running) {
				agentSession.abort();
				await agentSession.agent.waitForIdle();
			}
		}
		const { session } = this.started;
		return session.persisted ? `Session saved: resume with \`prime-agent --resume ${session.id}\`.` : "";
	}

	/** Whether a `still_busy` question waits for its answer. */
	get asking(): boolean {
		return this.stillBusy !== undefined;
	}

	private onLine(line: SessionLine): void {
		if (line.type === "agent_start") this.presses = 0;
		if (line.type === "tool_execution_start" && line.toolName === "ipython") this.ipythonCalls.add(line.toolCallId);
		if (line.type === "tool_execution_end") this.ipythonCalls.delete(line.toolCallId);
		if (line.type === "message_start") this.inputs.taken(line.message);
		this.emit(line);
		if (line.type !== "message_update" && line.type !== "tool_execution_update") this.statusChanged();
	}

	/** One `status` event for a burst of changes. */
	private statusChanged(): void {
		if (this.statusQueued || this.closed) return;
		this.statusQueued = true;
		setImmediate(() => {
			this.statusQueued = false;
			if (!this.closed) this.emit({ type: "status" });
		});
	}

	private emit(event: SessionEvent): void {
		for (const listener of this.listeners) listener(event);
	}
}

/** Drive `started` from a view in this process. */
export function localLink(started: StartedSession, notices?: readonly string[]): LocalLink {
	return new LocalLink(started, notices);
}
