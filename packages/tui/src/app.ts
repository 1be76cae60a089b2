import { formatWithOptions } from "node:util";
import {
	type Component,
	Container,
	Editor,
	Key,
	matchesKey,
	type SlashCommand,
	type Terminal,
	Text,
	TUI,
} from "@mariozechner/pi-tui";
import {
	type ChildEvent,
	contextTokens,
	describeAutonomousEvent,
	describeChildEvent,
	describeGoalEvent,
	describeModelFailure,
	describeNotice,
	type InteractiveContext,
	type KernelStatus,
	onLongRunningEvents,
	parseSlashCommand,
	type RunOutcome,
	type SessionNotice,
	type StartedSession,
	sessionUsage,
	UserError,
} from "prime-agent";
import { PromptCompletion } from "./autocomplete.js";
import { CellView } from "./components/cell.js";
import { AssistantView, NoteView, Spaced, UserView } from "./components/messages.js";
import { type KernelState, type StatusInfo, StatusLine } from "./components/status-line.js";
import { LOCAL_COMMANDS, type LocalCommands } from "./local-commands.js";
import { style } from "./style.js";
import { editorTheme } from "./theme.js";
import { addHistory, contentText } from "./transcript.js";

type AgentEvent = Parameters<Parameters<StartedSession["agentSession"]["subscribe"]>[0]>[0];

/** How long after a cell reaches its just-started kernel a pending interrupt is sent. */
const INTERRUPT_MARGIN_MS = 300;

/** How the app leaves: the exit code for `prime-agent`. */
export type AppExit = { code: 0 } | { code: number; message: string };

/**
 * The interactive terminal UI over one session at a time: the conversation (answers, cells,
 * capsules, notes), the editor and the status line. It drives the session only through the
 * agent's public API; switching sessions (`/resume`, `/model`, `/fork`, `/new`) goes through the
 * command line's `switchSession`.
 */
export class InteractiveApp {
	readonly tui: TUI;
	readonly chat = new Container();
	readonly editor: Editor;
	private readonly header = new Text("", 1, 0);
	private readonly hint = new Text("", 1, 0);
	private readonly statusLine: StatusLine;
	private started: StartedSession;
	private detachSession: (() => void)[] = [];
	private streaming: AssistantView | undefined;
	private readonly cells = new Map<string, CellView>();
	/** Whether cell results and capsules show in full (Ctrl-O). */
	private expanded = false;
	private kernel: KernelState = "not started";
	private promptRunning = false;
	/** Messages sent to the running turn (steering or follow-up) not yet taken by it. */
	private queuedMessages: string[] = [];
	/** Slash commands typed while a turn runs: they run, in order, once it ends. */
	private queuedCommands: string[] = [];
	private interruptPresses = 0;
	private exitPresses = 0;
	private tick: NodeJS.Timeout | undefined;
	private finish: ((exit: AppExit) => void) | undefined;
	private stopped = false;
	private releaseConsole: (() => void) | undefined;
	readonly local: LocalCommands;

	constructor(
		terminal: Terminal,
		private readonly context: Pick<InteractiveContext, "started" | "switchSession" | "env">,
	) {
		this.started = context.started;
		this.tui = new TUI(terminal);
		this.editor = new Editor(this.tui, editorTheme, { paddingX: 1, autocompleteMaxVisible: 8 });
		this.statusLine = new StatusLine(() => this.status());
		this.editor.setAutocompleteProvider(
			new PromptCompletion(
				() => this.slashCommands(),
				() => this.started.session.cwd,
			),
		);
		this.editor.onSubmit = (text) => this.submit(text);
		this.local = LOCAL_COMMANDS(this);
		this.tui.addChild(this.header);
		this.tui.addChild(this.chat);
		this.tui.addChild(this.hint);
		this.tui.addChild(this.editor);
		this.tui.addChild(this.statusLine);
		this.tui.setFocus(this.editor);
		this.tui.addInputListener((data) => this.onKey(data));
	}

	/** Start drawing and reading keys; resolves when the user leaves. */
	run(): Promise<AppExit> {
		const exited = new Promise<AppExit>((resolve) => {
			this.finish = resolve;
		});
		this.attach(this.started, this.started.notices);
		this.releaseConsole = this.captureConsole();
		this.tui.start();
		// Elapsed time of a running cell and the spinner-free "working" state refresh once a second.
		this.tick = setInterval(() => {
			if (this.working) this.tui.requestRender();
		}, 1000);
		return exited;
	}

	get session(): StartedSession {
		return this.started;
	}

	get env(): NodeJS.ProcessEnv {
		return this.context.env;
	}

	get working(): boolean {
		return this.promptRunning || this.started.agentSession.running;
	}

	get isExpanded(): boolean {
		return this.expanded;
	}

	/** Add a note (a command's answer, a problem) to the conversation. */
	note(text: string, tone: "info" | "error" = "info"): void {
		this.add(new NoteView(text, tone));
		this.tui.requestRender();
	}

	/**
	 * While the UI draws, what code in this process prints through `console` (an extension's
	 * command, a hook) becomes a note: written to the terminal it would land over the UI and leave
	 * the differential renderer drawing on a screen it no longer knows. Returns the undo.
	 */
	private captureConsole(): () => void {
		const methods = ["log", "info", "debug", "warn", "error"] as const;
		const saved = methods.map((name) => [name, console[name]] as const);
		for (const name of methods)
			console[name] = (...args: unknown[]) =>
				this.note(
					formatWithOptions({ colors: false }, ...args),
					name === "warn" || name === "error" ? "error" : "info",
				);
		return () => {
			for (const [name, original] of saved) console[name] = original;
		};
	}

	/** Add a block to the conversation (a blank line above it). */
	add(block: Component): void {
		this.chat.addChild(new Spaced(block));
	}

	/** Show `component` over the conversation until `close` is called. */
	overlay(component: Component): { close(): void } {
		const handle = this.tui.showOverlay(component, { width: "90%", maxHeight: "80%", anchor: "center" });
		return {
			close: () => {
				handle.hide();
				this.tui.setFocus(this.editor);
				this.tui.requestRender();
			},
		};
	}

	/** Leave: stop a running turn, then stop drawing. */
	async exit(exit: AppExit = { code: 0 }): Promise<void> {
		if (this.started.agentSession.running) {
			this.started.agentSession.abort();
			await this.started.agentSession.agent.waitForIdle();
		}
		this.stop();
		this.finish?.(exit);
	}

	/** Stop drawing and listening (the session is left to the caller). Once; later calls do nothing. */
	stop(): void {
		if (this.stopped) return;
		this.stopped = true;
		this.releaseConsole?.();
		if (this.tick) clearInterval(this.tick);
		this.tick = undefined;
		this.detach();
		this.tui.stop();
	}

	/**
	 * Replace the session (the command line disposes the old one first). When the new one cannot
	 * start, the old one is resumed again by its id, so the user is never left without a session.
	 */
	async switchSession(changes: Parameters<InteractiveContext["switchSession"]>[0], what: string): Promise<boolean> {
		if (this.working) {
			this.note(`Wait for the turn to end (or stop it with Ctrl-C twice) before ${what}.`, "error");
			return false;
		}
		const previous = this.started;
		const back = {
			model: `${previous.agentSession.model.provider}/${previous.agentSession.model.id}`,
			...(previous.session.persisted ? { resume: previous.session.path } : {}),
		};
		this.detach();
		this.note(`${what[0]?.toUpperCase()}${what.slice(1)}…`);
		try {
			const next = await this.context.switchSession(changes);
			this.attach(next, next.notices);
			return true;
		} catch (error) {
			try {
				const again = await this.context.switchSession(back);
				this.attach(again, []);
			} catch (second) {
				await this.exit({ code: 1, message: errorText(second) });
				return false;
			}
			this.note(`${what[0]?.toUpperCase()}${what.slice(1)} failed: ${errorText(error)}`, "error");
			return false;
		}
	}

	/** Lay the conversation out again from the session's active branch (after `/tree`). */
	redraw(notices: readonly string[] = []): void {
		this.chat.clear();
		this.cells.clear();
		this.streaming = undefined;
		const { session, agentSession } = this.started;
		this.header.setText(
			[
				`${style.bold("prime-agent")} ${style.gray(`· ${agentSession.model.provider}/${agentSession.model.id} · ${session.cwd}`)}`,
				style.gray("/ commands · @ files · Alt+Enter new line · Ctrl-O expand · Esc interrupt · Ctrl-D exit"),
				...notices.map((line) => style.yellow(line)),
			].join("\n"),
		);
		addHistory((block) => this.add(block), session.context().messages, this.cellOptions());
		this.tui.requestRender(true);
	}

	private attach(started: StartedSession, notices: readonly string[]): void {
		this.started = started;
		this.kernel = "not started";
		this.queuedMessages = [];
		this.queuedCommands = [];
		const { agentSession } = started;
		this.detachSession = [
			agentSession.subscribe((event) => this.onEvent(event)),
			agentSession.onNotice((notice) => this.onNotice(notice)),
			agentSession.onWakeOutcome((outcome) => this.afterRun(outcome)),
			started.onKernelStatus((status) => this.onKernelStatus(status)),
			started.onChildEvent((event) => this.onChildEvent(event)),
			started.onChildUsage(() => this.tui.requestRender()),
			onLongRunningEvents(started, (event) => {
				const text = event.type === "goal" ? describeGoalEvent(event) : describeAutonomousEvent(event);
				if (text) this.note(text);
			}),
		];
		started.kernel.onStillBusy = () => this.local.askStillBusy();
		this.redraw(notices);
	}

	private detach(): void {
		for (const stop of this.detachSession.splice(0)) stop();
		this.started.kernel.onStillBusy = undefined;
	}

	private cellOptions() {
		return {
			isExpanded: () => this.expanded,
			readArchive: (id: string, start: number, end: number) => this.readArchive(id, start, end),
			requestRender: () => this.tui.requestRender(),
		};
	}

	/** Lines of an archived observation through `/pc read` (the recovery read; no model call). */
	private async readArchive(id: string, start: number, end: number): Promise<string> {
		const command = this.started.extensions.command("pc");
		if (!command) throw new Error("Prime Context is not loaded in this session");
		const answer = await command.handler(`read ${id} ${start}:${end}`);
		return typeof answer === "string" ? answer : "";
	}

	private onEvent(event: AgentEvent): void {
		switch (event.type) {
			case "agent_start":
				this.interruptPresses = 0;
				break;
			case "message_start":
				if (event.message.role === "assistant") {
					this.streaming = new AssistantView();
					this.add(this.streaming);
				}
				break;
			case "message_update":
				if (event.message.role === "assistant" && this.streaming)
					this.streaming.setContent(contentText(event.message.content), contentText(event.message.content, "thinking"));
				break;
			case "message_end":
				this.onMessageEnd(event.message);
				break;
			case "tool_execution_start": {
				const cell = new CellView({ ...this.cellOptions(), toolName: event.toolName, args: event.args });
				this.cells.set(event.toolCallId, cell);
				this.add(cell);
				if (event.toolName === "ipython" && this.kernel !== "starting") this.kernel = "busy";
				break;
			}
			case "tool_execution_update":
				this.cells.get(event.toolCallId)?.setPartial(contentText(event.partialResult?.content));
				break;
			case "tool_execution_end":
				this.cells
					.get(event.toolCallId)
					?.finish(contentText(event.result?.content), event.isError, event.result?.details);
				this.cells.delete(event.toolCallId);
				if (
					event.toolName === "ipython" &&
					(event.result?.details as { status?: string } | undefined)?.status === "died"
				)
					this.kernel = "died";
				else if (event.toolName === "ipython" && this.kernel === "busy") this.kernel = "idle";
				if (event.toolName === "ipython" && this.kernel === "restarting") this.kernel = "restarted";
				break;
		}
		this.tui.requestRender();
	}

	private onMessageEnd(message: AgentEvent & { type: "message_end" } extends { message: infer M } ? M : never): void {
		if (message.role === "assistant") {
			const view = this.streaming;
			this.streaming = undefined;
			if (!view) return;
			view.setContent(contentText(message.content), contentText(message.content, "thinking"));
			if (message.stopReason === "error")
				view.setError(describeModelFailure(this.started.agentSession.model, message.errorMessage));
			if (message.stopReason === "aborted") view.setError("Turn stopped.");
		} else if (message.role === "user") {
			// A queued message reached the turn: it is no longer waiting.
			const text = contentText(message.content);
			const index = this.queuedMessages.indexOf(text);
			if (index !== -1) this.queuedMessages.splice(index, 1);
		}
	}

	private onNotice(notice: SessionNotice): void {
		const text = describeNotice(notice);
		if (text) this.note(text, notice.type === "compaction_failed" ? "error" : "info");
	}

	private onKernelStatus(status: KernelStatus): void {
		if (status.phase === "starting") this.kernel = "starting";
		else if (status.phase === "restarting") this.kernel = "restarting";
		else if (status.phase === "failed") {
			this.kernel = "failed";
			this.note(`Python kernel failed to start: ${status.message}`, "error");
		} else this.kernel = this.cells.size > 0 ? "busy" : "idle";
		this.tui.requestRender();
	}

	private onChildEvent(event: ChildEvent): void {
		this.note(describeChildEvent(event));
	}

	private onKey(data: string): { consume?: boolean } | undefined {
		if (this.tui.hasOverlay()) return undefined;
		if (!matchesKey(data, Key.ctrl("c"))) this.exitPresses = 0;
		if (matchesKey(data, Key.ctrl("o"))) {
			this.expanded = !this.expanded;
			this.chat.invalidate();
			this.tui.requestRender();
			return { consume: true };
		}
		if (matchesKey(data, Key.ctrl("d"))) {
			if (this.editor.getText() !== "") return undefined;
			void this.exit();
			return { consume: true };
		}
		if (matchesKey(data, Key.escape)) {
			if (!this.working || this.editor.isShowingAutocomplete()) return undefined;
			this.interrupt();
			return { consume: true };
		}
		if (matchesKey(data, Key.ctrl("c"))) {
			if (this.working) this.interrupt();
			else if (this.editor.getText() !== "") this.editor.setText("");
			else if (++this.exitPresses >= 2) void this.exit();
			else this.setHint("Ctrl-C again (or Ctrl-D) leaves.");
			return { consume: true };
		}
		if (matchesKey(data, Key.alt("enter")) && this.working) {
			const text = this.editor.getExpandedText().trim();
			if (text !== "") {
				this.editor.addToHistory(text);
				this.editor.setText("");
				this.queueMessage(text, "followUp");
			}
			return { consume: true };
		}
		return undefined;
	}

	/** First press: interrupt the running cell (the kernel keeps its variables); next: stop the turn. */
	private interrupt(): void {
		this.interruptPresses++;
		if (this.interruptPresses === 1 && this.started.kernel.interruptCell()) {
			this.setHint("Interrupting the running cell; Ctrl-C again stops the turn.");
			return;
		}
		if (this.interruptPresses === 1 && this.ipythonRunning()) {
			// The cell is called but its kernel has not started running it yet: it is interrupted once it runs.
			this.setHint("Interrupting the cell once the kernel has started; Ctrl-C again stops the turn.");
			// Once the cell is handed to the kernel, a short margin lets its execution begin: an interrupt
			// that reaches the kernel before the cell starts would be lost and the cell would run on.
			const retry = () => {
				if (this.interruptPresses !== 1 || !this.ipythonRunning()) return;
				if (this.started.kernel.busy) setTimeout(() => this.started.kernel.interruptCell(), INTERRUPT_MARGIN_MS);
				else setTimeout(retry, 20);
			};
			setTimeout(retry, 20);
			return;
		}
		this.started.agentSession.abort();
		this.setHint("Stopping the turn…");
	}

	/** An ipython call is under way (its kernel may still be starting). */
	private ipythonRunning(): boolean {
		return [...this.cells.values()].some((cell) => cell.toolName === "ipython");
	}

	private setHint(text: string): void {
		this.hint.setText(text ? style.yellow(text) : "");
		this.tui.requestRender();
	}

	private submit(raw: string): void {
		const text = raw.trim();
		if (text === "") return;
		this.editor.addToHistory(text);
		this.setHint("");
		const command = parseSlashCommand(text);
		const local = command && this.local.find(command.name);
		if (local && command) {
			void local.run(command.args);
			return;
		}
		if (this.working) {
			if (command) {
				this.queuedCommands.push(text);
				this.note(`/${command.name} runs when the turn ends.`);
			} else this.queueMessage(text, "steer");
			return;
		}
		void this.runPrompt(text);
	}

	/** A message for the running turn: steering (after the current cell) or a follow-up (after the turn). */
	private queueMessage(text: string, how: "steer" | "followUp"): void {
		const message = { role: "user" as const, content: [{ type: "text" as const, text }], timestamp: Date.now() };
		if (how === "steer") this.started.agentSession.agent.steer(message);
		else this.started.agentSession.agent.followUp(message);
		this.queuedMessages.push(text);
		const note = how === "steer" ? "queued: the agent reads it after the current step" : "queued: after this turn";
		this.add(new UserView(text, note));
		this.tui.requestRender();
	}

	private async runPrompt(text: string): Promise<void> {
		if (!parseSlashCommand(text)) this.add(new UserView(text));
		this.promptRunning = true;
		this.tui.requestRender();
		let outcome: RunOutcome;
		try {
			outcome = await this.started.agentSession.prompt(text);
		} catch (error) {
			outcome = { status: "error", errorMessage: errorText(error) };
		} finally {
			this.promptRunning = false;
		}
		this.afterRun(outcome);
	}

	/** Report how a run ended (errors the answer did not show), then run the commands that waited. */
	private afterRun(outcome: RunOutcome): void {
		this.setHint("");
		this.interruptPresses = 0;
		if (outcome.command?.message) this.note(outcome.command.message, outcome.status === "error" ? "error" : "info");
		else if (outcome.status === "error" && !outcome.lastAssistant)
			this.note(outcome.errorMessage ?? "The run failed.", "error");
		const next = this.queuedCommands.shift();
		if (next && !this.working) void this.runPrompt(next);
		this.tui.requestRender();
	}

	private slashCommands(): SlashCommand[] {
		const { agentSession, extensions } = this.started;
		const session = agentSession.commandNames.map((name) => ({
			name,
			description: name === "compact" ? "summarise the older conversation now" : extensions.command(name)?.description,
			...argumentCompletions(extensions.command(name)?.arguments),
		}));
		const own = this.local.list().filter((command) => !agentSession.commandNames.includes(command.name));
		return [...session, ...own].sort((a, b) => a.name.localeCompare(b.name));
	}

	private status(): StatusInfo {
		const { agentSession, session, children } = this.started;
		const usage = sessionUsage(session.entries).total;
		return {
			model: `${agentSession.model.provider}/${agentSession.model.id}`,
			contextTokens: contextTokens(agentSession.agent.state.messages),
			contextWindow: agentSession.model.contextWindow,
			totalTokens: usage.totalTokens,
			cost: usage.cost.total,
			kernel: this.kernel,
			runningChildren: children.list().filter((child) => child.status === "running" || child.status === "starting")
				.length,
			queued: this.queuedMessages.length + this.queuedCommands.length,
			working: this.working,
			goal: this.started.goals.active()?.objective,
		};
	}
}

/** Completion of a command's first argument from the words it names (none: no completion). */
function argumentCompletions(words: readonly string[] | undefined): Pick<SlashCommand, "getArgumentCompletions"> {
	if (!words?.length) return {};
	return {
		getArgumentCompletions: (prefix) => {
			if (/\s/.test(prefix)) return null;
			const items = words.filter((word) => word.startsWith(prefix)).map((word) => ({ value: word, label: word }));
			return items.length > 0 ? items : null;
		},
	};
}

export function errorText(error: unknown): string {
	if (error instanceof UserError) return `${error.message} ${error.hint}`;
	return error instanceof Error ? error.message : String(error);
}
