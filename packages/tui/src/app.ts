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
import type {
	InteractiveContext,
	KernelStatus,
	LinkEvent,
	LinkRunEnd,
	LinkStatus,
	SessionChanges,
	SessionLink,
	StartedSession,
} from "prime-agent";
import {
	captureConsole,
	describeModelFailure,
	describeSessionLine,
	isSessionLine,
	parseSlashCommand,
	promptText,
	sameSession,
} from "prime-agent/view";
import { argumentCompletions, PromptCompletion } from "./autocomplete.js";
import { CellView } from "./components/cell.js";
import { AssistantView, NoteView, Spaced, UserView } from "./components/messages.js";
import { type KernelState, type StatusInfo, StatusLine } from "./components/status-line.js";
import { errorText } from "./error-text.js";
import { type CommandHost, LOCAL_COMMANDS, type LocalCommands } from "./local-commands.js";
import { style } from "./style.js";
import { editorTheme } from "./theme.js";
import { addHistory, contentText, notInHistory } from "./transcript.js";

type AgentEvent = Parameters<Parameters<StartedSession["agentSession"]["subscribe"]>[0]>[0];

/** How the app leaves: the exit code for `prime-agent`. */
export type AppExit = { code: 0 } | { code: number; message: string };

/**
 * The interactive terminal UI over one session at a time: the conversation (answers, cells,
 * capsules, notes), the editor and the status line. It drives the session only through its
 * `SessionLink` (a background worker's, or one in this process), so it is a pure view: what it
 * shows comes from the link's events; switching sessions (`/resume`, `/model`, `/fork`, `/new`)
 * goes through the command line's `switchSession`.
 */
export class InteractiveApp implements CommandHost {
	readonly tui: TUI;
	readonly chat = new Container();
	readonly editor: Editor;
	private readonly header = new Text("", 1, 0);
	private readonly hint = new Text("", 1, 0);
	private readonly statusLine: StatusLine;
	private current: SessionLink;
	private detachSession: (() => void) | undefined;
	private streaming: AssistantView | undefined;
	private readonly cells = new Map<string, CellView>();
	/** Whether cell results and capsules show in full (Ctrl-O). */
	private expanded = false;
	private kernel: KernelState = "not started";
	/** This view's prompts not yet ended. */
	private ownRuns = 0;
	/** Messages sent to the running turn (steering or follow-up) not yet taken by it. */
	private queuedMessages: string[] = [];
	/** Slash commands typed while a turn runs: they run, in order, once it ends. */
	private queuedCommands: string[] = [];
	/** The text of this view's prompts shown already, until the session's user message for each comes. */
	private shownPrompts: string[] = [];
	private exitPresses = 0;
	private tick: NodeJS.Timeout | undefined;
	private finish: ((exit: AppExit) => void) | undefined;
	private stopped = false;
	private releaseConsole: (() => void) | undefined;
	/** What to tell the user on leaving (how to get back to the session). */
	farewell = "";
	readonly local: LocalCommands;

	constructor(
		terminal: Terminal,
		private readonly context: Pick<InteractiveContext, "link" | "switchSession" | "env" | "paths">,
	) {
		this.current = context.link;
		this.tui = new TUI(terminal);
		this.editor = new Editor(this.tui, editorTheme, { paddingX: 1, autocompleteMaxVisible: 8 });
		this.statusLine = new StatusLine(() => this.status());
		this.editor.setAutocompleteProvider(
			new PromptCompletion(
				() => this.slashCommands(),
				() => this.current.status().session.cwd,
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
		void this.attach(this.current, this.current.notices);
		// While the UI draws, what code in this process prints (an extension's command, a hook) is a
		// note: written to the terminal it would land over the UI and leave the renderer drawing on a
		// screen it no longer knows.
		this.releaseConsole = captureConsole((text, level) =>
			this.note(text, level === "warn" || level === "error" ? "error" : "info"),
		);
		this.tui.start();
		// Elapsed time of a running cell and the spinner-free "working" state refresh once a second.
		this.tick = setInterval(() => {
			if (this.working) this.tui.requestRender();
			else this.preloadCommands();
		}, 1000);
		return exited;
	}

	private preloaded = false;

	/**
	 * What `/model` and `/resume` use (the model catalogue, the session files) loads the first time
	 * the UI is idle: the first frame and the first answer do without it (see `prime-agent/view`).
	 */
	private preloadCommands(): void {
		if (this.preloaded) return;
		this.preloaded = true;
		void import("prime-agent").catch(() => {});
	}

	/** The session the UI drives now. */
	get link(): SessionLink {
		return this.current;
	}

	get env(): NodeJS.ProcessEnv {
		return this.context.env;
	}

	get paths(): InteractiveContext["paths"] {
		return this.context.paths;
	}

	get working(): boolean {
		return this.ownRuns > 0 || this.current.status().running;
	}

	get isExpanded(): boolean {
		return this.expanded;
	}

	/** Add a note (a command's answer, a problem) to the conversation. */
	note(text: string, tone: "info" | "error" = "info"): void {
		this.add(new NoteView(text, tone));
		this.notesWhileAway?.push({ text, tone });
		this.tui.requestRender();
	}

	/** Notes shown while the worker is away: laid out again after the reconnect's fresh layout. */
	private notesWhileAway: { text: string; tone: "info" | "error" }[] | undefined;

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

	/**
	 * Leave: a session in this process stops its running turn; a background one goes on (the view
	 * detaches). Then stop drawing.
	 */
	async exit(exit: AppExit = { code: 0 }): Promise<void> {
		this.detach();
		try {
			this.farewell = await this.current.close();
		} catch (error) {
			this.farewell = errorText(error);
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
	async switchSession(changes: SessionChanges, what: string): Promise<boolean> {
		if (this.working) {
			this.note(`Wait for the turn to end (or stop it with Ctrl-C twice) before ${what}.`, "error");
			return false;
		}
		const previous = this.current.status();
		const back = {
			model: `${previous.model.provider}/${previous.model.id}`,
			...sameSession(previous.session),
		};
		this.detach();
		this.note(`${what[0]?.toUpperCase()}${what.slice(1)}…`);
		try {
			const next = await this.context.switchSession(changes);
			await this.attach(next, next.notices);
			return true;
		} catch (error) {
			try {
				const again = await this.context.switchSession(back);
				await this.attach(again, []);
			} catch (second) {
				await this.exit({ code: 1, message: errorText(second) });
				return false;
			}
			this.note(`${what[0]?.toUpperCase()}${what.slice(1)} failed: ${errorText(error)}`, "error");
			return false;
		}
	}

	/**
	 * Lay the conversation out again from the session's active branch (on attaching, after
	 * `/tree`). Events that arrive meanwhile wait, so nothing is drawn twice or lost.
	 */
	async redraw(notices: readonly string[] = []): Promise<void> {
		const layout = ++this.layouts;
		this.holding ??= [];
		const held = this.holding;
		let messages: Awaited<ReturnType<SessionLink["history"]>> = [];
		try {
			messages = await this.current.history();
		} catch (error) {
			if (layout !== this.layouts) return;
			this.holding = undefined;
			for (const event of held) this.onEvent(event);
			this.note(`The conversation could not be read: ${errorText(error)}`, "error");
			return;
		}
		// A newer layout started meanwhile: it draws (and replays what was held).
		if (layout !== this.layouts) return;
		this.chat.clear();
		this.cells.clear();
		this.streaming = undefined;
		const { session, model } = this.current.status();
		this.header.setText(
			[
				`${style.bold("prime-agent")} ${style.gray(`· ${model.provider}/${model.id} · ${session.cwd}${this.current.agentKey ? ` · agent ${this.current.agentKey}` : ""}`)}`,
				style.gray("/ commands · @ files · Alt+Enter new line · Ctrl-O expand · Esc interrupt · Ctrl-D exit"),
				...notices.map((line) => style.yellow(line)),
			].join("\n"),
		);
		const unfinished = addHistory((block) => this.add(block), messages, this.cellOptions());
		// Cells still running (a view attached mid-turn) finish when their results come; any other never will.
		for (const [id, cell] of unfinished) {
			if (this.current.status().running) {
				this.cells.set(id, cell);
				if (cell.toolName === "ipython") this.kernel = "busy";
			} else cell.finish("", true, { status: "aborted" });
		}
		this.holding = undefined;
		for (const event of notInHistory(held, messages)) this.onEvent(event);
		this.tui.requestRender(true);
	}

	/** Events held while the conversation is laid out again. */
	private holding: LinkEvent[] | undefined;
	/** Bumped by each layout: an older one still reading its history gives way to the newer. */
	private layouts = 0;
	/** The still-busy question shown, if any. */
	private question: { dismiss(): void } | undefined;
	/** This view's `/tree` is moving the conversation (its `branched` event needs no redraw). */
	branching = false;

	private async attach(link: SessionLink, notices: readonly string[]): Promise<void> {
		this.current = link;
		this.kernel = link.status().kernelStarted ? "idle" : "not started";
		this.queuedMessages = [];
		this.queuedCommands = [];
		this.detachSession = link.subscribe((event) => {
			if (this.holding) this.holding.push(event);
			else this.onEvent(event);
		});
		await this.redraw(notices);
	}

	private detach(): void {
		this.detachSession?.();
		this.detachSession = undefined;
	}

	private cellOptions() {
		return {
			isExpanded: () => this.expanded,
			readArchive: (id: string, start: number, end: number) => this.readArchive(id, start, end),
			requestRender: () => this.tui.requestRender(),
		};
	}

	/** Lines of an archived observation (Prime Context's recovery read; no model call). */
	private readArchive(id: string, start: number, end: number): Promise<string> {
		return this.current.readArchive(id, start, end);
	}

	/** What the session says: loop events, then everything else it reports. */
	private onEvent(event: LinkEvent): void {
		const type = event.type;
		if (type === "status") {
			this.runWaitingCommand();
			this.tui.requestRender();
		} else if (type === "run_end") this.afterRun(event as unknown as LinkRunEnd);
		else if (type === "still_busy") this.askStillBusy(event.question as number | undefined);
		else if (type === "still_busy_answered") this.question?.dismiss();
		else if (type === "branched") {
			// Another view moved the conversation (this view's own `/tree` redraws itself).
			if (!this.branching)
				void this.redraw().then(() => this.note("Another view moved the conversation to another entry."));
		} else if (type === "bye") this.onBye(String(event.reason));
		else if (type === "reconnecting") {
			this.kernel = "died";
			this.notesWhileAway = [];
			this.note(
				event.reason
					? `The agent's worker is being started again (${String(event.reason)})…`
					: "The agent's worker stopped unexpectedly; waiting for the supervisor to restart it…",
				event.reason ? "info" : "error",
			);
		} else if (type === "reconnected") void this.onReconnected(event.reason as string | undefined);
		else if (type === "kernel_status") this.onKernelStatus(event as unknown as KernelStatus);
		else if (isSessionLine(type)) {
			const said = describeSessionLine(event);
			if (said) this.note(said.text, said.error ? "error" : "info");
		} else this.onAgentEvent(event as unknown as AgentEvent);
	}

	/** A cell ignored the interrupt: ask; an answer from another view closes the question here. */
	private askStillBusy(question: number | undefined): void {
		this.question?.dismiss();
		const asked = this.local.askStillBusy();
		this.question = asked;
		void asked.answer.then((choice) => {
			if (this.question === asked) this.question = undefined;
			if (choice) this.current.answerStillBusy(choice, question);
		});
	}

	/** The restarted worker answers: the conversation is laid out again from its session. */
	private async onReconnected(reason: string | undefined): Promise<void> {
		this.kernel = this.current.status().kernelStarted ? "idle" : "not started";
		this.queuedMessages = [];
		const away = this.notesWhileAway ?? [];
		this.notesWhileAway = undefined;
		await this.redraw(this.current.notices);
		for (const { text, tone } of away) this.note(text, tone);
		this.note(
			reason
				? `Reconnected to agent ${this.current.agentKey}: ${reason}.`
				: `Reconnected to agent ${this.current.agentKey} after its worker restarted; the session goes on from its last saved entry.`,
		);
	}

	/** The session's worker went away (stopped by another client, or crashed): leave, saying how to come back. */
	private onBye(reason: string): void {
		const key = this.current.agentKey;
		void this.exit({
			code: 1,
			message: `The agent's worker stopped (${reason}).${key ? ` \`prime-agent agents\` shows its state; \`prime-agent attach ${key}\` continues the session.` : ""}`,
		});
	}

	private onAgentEvent(event: AgentEvent): void {
		switch (event.type) {
			case "message_start":
				if (event.message.role === "assistant") {
					this.streaming = new AssistantView();
					this.add(this.streaming);
				}
				break;
			case "message_update":
				if (event.message.role !== "assistant") break;
				// Attached mid-answer: the answer so far shows from its next update.
				if (!this.streaming) {
					this.streaming = new AssistantView();
					this.add(this.streaming);
				}
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
			// Attached after its last update: the answer shows whole.
			const view = this.streaming ?? new AssistantView();
			if (!this.streaming) this.add(view);
			this.streaming = undefined;
			view.setContent(contentText(message.content), contentText(message.content, "thinking"));
			if (message.stopReason === "error")
				view.setError(describeModelFailure(this.current.status().model, message.errorMessage));
			if (message.stopReason === "aborted") view.setError("Turn stopped.");
		} else if (message.role === "user") {
			const text = contentText(message.content);
			// A queued message reached the turn: it is no longer waiting.
			const queued = this.queuedMessages.indexOf(text);
			const shown = this.shownPrompts.indexOf(text);
			if (queued !== -1) this.queuedMessages.splice(queued, 1);
			else if (shown !== -1) this.shownPrompts.splice(shown, 1);
			// Sent by another view, a schedule or a heartbeat: shown as it reaches the session.
			else this.add(new UserView(text));
		}
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
		void this.current.interrupt().then(
			(action) =>
				this.setHint(
					action === "cell"
						? "Interrupting the running cell; Ctrl-C again stops the turn."
						: action === "pending"
							? "Interrupting the cell once the kernel has started; Ctrl-C again stops the turn."
							: "Stopping the turn…",
				),
			(error) => this.note(`The interrupt did not reach the session: ${errorText(error)}`, "error"),
		);
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
			local.run(command.args).catch((error) => this.note(`/${command.name} failed: ${errorText(error)}`, "error"));
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
		const delivered = how === "steer" ? this.current.steer(text) : this.current.followUp(text);
		delivered.catch((error) => this.note(`The message did not reach the session: ${errorText(error)}`, "error"));
		this.queuedMessages.push(text);
		const note = how === "steer" ? "queued: the agent reads it after the current step" : "queued: after this turn";
		this.add(new UserView(text, note));
		this.tui.requestRender();
	}

	private async runPrompt(text: string): Promise<void> {
		if (!parseSlashCommand(text)) {
			this.add(new UserView(text));
			this.shownPrompts.push(promptText(text));
		}
		this.ownRuns++;
		this.tui.requestRender();
		let end: LinkRunEnd;
		try {
			end = await this.current.prompt(text);
		} catch (error) {
			end = { status: "error", errorMessage: errorText(error) };
		} finally {
			this.ownRuns--;
		}
		// Never sent (the worker was away): the text goes back to the editor to be sent again.
		if (end.notSent && this.editor.getText() === "") {
			this.editor.setText(text);
			end = { ...end, errorMessage: `${end.errorMessage ?? ""} The message is back in the editor.`.trim() };
		}
		this.afterRun(end);
	}

	/** Report how a run ended (errors the answer did not show), then run the commands that waited. */
	private afterRun(end: LinkRunEnd): void {
		this.setHint("");
		if (end.commandMessage) this.note(end.commandMessage, end.status === "error" ? "error" : "info");
		else if (end.errorMessage) this.note(end.errorMessage, "error");
		this.runWaitingCommand();
		this.tui.requestRender();
	}

	/** A command that waited runs once the session is idle (a run ending is not always the last). */
	private runWaitingCommand(): void {
		if (this.working) return;
		const next = this.queuedCommands.shift();
		if (next) void this.runPrompt(next);
	}

	private slashCommands(): SlashCommand[] {
		const commands = this.current.status().commands;
		const session = commands.map((command) => ({
			name: command.name,
			description: command.description,
			...argumentCompletions(command.arguments),
		}));
		const own = this.local.list().filter((local) => !commands.some((command) => command.name === local.name));
		return [...session, ...own].sort((a, b) => a.name.localeCompare(b.name));
	}

	private status(): StatusInfo {
		const status: LinkStatus = this.current.status();
		return {
			model: `${status.model.provider}/${status.model.id}`,
			contextTokens: status.contextTokens,
			contextWindow: status.model.contextWindow,
			totalTokens: status.totalTokens,
			cost: status.cost,
			kernel: this.kernel,
			runningChildren: status.runningChildren,
			queued: this.queuedMessages.length + this.queuedCommands.length,
			working: this.working,
			goal: status.goal,
		};
	}
}
