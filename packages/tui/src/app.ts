import {
	type Component,
	Container,
	Editor,
	Key,
	matchesKey,
	type SlashCommand,
	StdinBuffer,
	type Terminal,
	Text,
	TUI,
} from "@mariozechner/pi-tui";
import type {
	InteractiveContext,
	KernelStatus,
	LinkRunEnd,
	LinkStatus,
	SessionChanges,
	SessionEvent,
	SessionLink,
} from "prime-agent";
import {
	captureConsole,
	describeModelFailure,
	describeSessionLine,
	ExitCode,
	isSessionLine,
	parseSlashCommand,
	promptText,
	sameSession,
} from "prime-agent/view";
import { argumentCompletions, PromptCompletion } from "./autocomplete.js";
import { NoteView, UserView } from "./components/messages.js";
import { QueuedInputs } from "./components/queued-inputs.js";
import { type KernelState, type StatusInfo, StatusLine } from "./components/status-line.js";
import { errorText } from "./error-text.js";
import { type CommandHost, LOCAL_COMMANDS, type LocalCommands } from "./local-commands.js";
import { style } from "./style.js";
import { editorTheme } from "./theme.js";
import { contentText, notInHistory } from "./transcript.js";
import { type AgentEvent, TranscriptView } from "./transcript-view.js";

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
	readonly transcript: TranscriptView;
	readonly editor: Editor;
	/** Where the editor is: a picker or a question takes its place while it is open. */
	private readonly inputArea = new Container();
	/** Pickers and questions open, the newest shown (see `showPanel`). */
	private readonly panels: Component[] = [];
	private readonly header = new Text("", 1, 0);
	private readonly hint = new Text("", 1, 0);
	private readonly statusLine: StatusLine;
	/** What the session holds queued (every view shows the same), above the editor. */
	private readonly queuedInputs: QueuedInputs;
	private current: SessionLink;
	private detachSession: (() => void) | undefined;
	private kernel: KernelState = "not started";
	/** This view's prompts not yet ended. */
	private ownRuns = 0;
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
		this.transcript = new TranscriptView({
			readArchive: (id, start, end) => this.current.readArchive(id, start, end),
			requestRender: () => this.tui.requestRender(),
		});
		this.editor = new Editor(this.tui, editorTheme, { paddingX: 1, autocompleteMaxVisible: 8 });
		this.statusLine = new StatusLine(() => this.status());
		this.queuedInputs = new QueuedInputs(() => this.current.status().queued);
		this.editor.setAutocompleteProvider(
			new PromptCompletion(
				() => this.slashCommands(),
				() => this.current.status().session.cwd,
			),
		);
		this.editor.onSubmit = (text) => this.submit(text);
		this.local = LOCAL_COMMANDS(this);
		this.tui.addChild(this.header);
		this.tui.addChild(this.transcript);
		this.tui.addChild(this.queuedInputs);
		this.tui.addChild(this.hint);
		this.inputArea.addChild(this.editor);
		this.tui.addChild(this.inputArea);
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

	/**
	 * Put the keys typed before the UI was ready in the editor, read as the editor reads keys (a
	 * Backspace typed then still erases). An Enter among them is a new line, and a last one is
	 * dropped: nothing is sent blind. The text was typed before the header said which session,
	 * model and folder it goes to and before a notice (project code held back, a session resumed
	 * elsewhere) could be read, and the session may still be starting; one more Enter sends it.
	 */
	typeAhead(keys: string): void {
		const sequences: string[] = [];
		const split = new StdinBuffer();
		split.on("data", (sequence) => sequences.push(sequence));
		split.process(keys);
		sequences.push(...split.flush());
		split.destroy();
		const enter = (sequence: string) => sequence === "\r" || sequence === "\n";
		while (sequences.length > 0 && enter(sequences.at(-1) as string)) sequences.pop();
		if (sequences.length === 0) return;
		for (const sequence of sequences) {
			if (enter(sequence)) this.editor.insertTextAtCursor("\n");
			else this.editor.handleInput(sequence);
		}
		this.setHint("Typed while starting: Enter sends it.");
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
		this.transcript.add(block);
	}

	/**
	 * Show `component` (a picker, a question) in the editor's place until `close` is called: it has
	 * the keys and whole lines of its own, so nothing of the conversation shows beside it. The
	 * editor keeps its text meanwhile.
	 */
	showPanel(component: Component): { close(): void } {
		this.panels.push(component);
		this.showNewestPanel();
		return {
			close: () => {
				const index = this.panels.indexOf(component);
				if (index === -1) return;
				this.panels.splice(index, 1);
				this.showNewestPanel();
			},
		};
	}

	/** Whether a picker or a question has the editor's place. */
	get showingPanel(): boolean {
		return this.panels.length > 0;
	}

	private showNewestPanel(): void {
		const shown = this.panels.at(-1) ?? this.editor;
		this.inputArea.clear();
		this.inputArea.addChild(shown);
		this.tui.setFocus(shown);
		this.tui.requestRender();
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
		// A session in this process ends with the UI (a worker's goes on when the view detaches): the
		// last frame, left on the terminal, says so rather than what ran before.
		if (this.current.agentKey === undefined) this.sessionEnded = true;
		if (this.sessionEnded) await this.drawStatusLine();
		this.stop();
		this.finish?.(exit);
	}

	/** The session has ended (its worker stopped, or this UI closed it in this process). */
	private sessionEnded = false;

	/** Draw a frame with the status line now; bounded, should the terminal no longer draw. */
	private async drawStatusLine(): Promise<void> {
		if (this.stopped) return;
		const drawn = this.statusLine.drawn();
		this.tui.requestRender();
		let timer: NodeJS.Timeout | undefined;
		await Promise.race([drawn, new Promise((resolve) => (timer = setTimeout(resolve, 1000)))]);
		clearTimeout(timer);
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
		const { session, model, running } = this.current.status();
		this.header.setText(
			[
				`${style.bold("prime-agent")} ${style.gray(`· ${model.provider}/${model.id} · ${session.cwd}${this.current.agentKey ? ` · agent ${this.current.agentKey}` : ""}`)}`,
				style.gray("/ commands · @ files · Alt+Enter new line · Ctrl-O expand · Esc interrupt · Ctrl-D exit"),
				...notices.map((line) => style.yellow(line)),
			].join("\n"),
		);
		if (this.transcript.layOut(messages, running)) this.kernel = "busy";
		this.holding = undefined;
		for (const event of notInHistory(held, messages)) this.onEvent(event);
		this.tui.requestRender(true);
	}

	/** Events held while the conversation is laid out again. */
	private holding: SessionEvent[] | undefined;
	/** Bumped by each layout: an older one still reading its history gives way to the newer. */
	private layouts = 0;
	/** The still-busy question shown, if any. */
	private question: { dismiss(): void } | undefined;
	/** This view's `/tree` is moving the conversation (its `branched` event needs no redraw). */
	branching = false;

	private async attach(link: SessionLink, notices: readonly string[]): Promise<void> {
		this.current = link;
		this.kernel = link.status().kernelStarted ? "idle" : "not started";
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

	/** What the session says: loop events, then everything else it reports. */
	private onEvent(event: SessionEvent): void {
		if (event.type === "status") this.tui.requestRender();
		else if (event.type === "run_end") this.afterRun(event);
		else if (event.type === "still_busy") this.askStillBusy(event.question);
		else if (event.type === "still_busy_answered") this.question?.dismiss();
		else if (event.type === "branched") {
			// Another view moved the conversation (this view's own `/tree` redraws itself).
			if (!this.branching)
				void this.redraw().then(() => this.note("Another view moved the conversation to another entry."));
		} else if (event.type === "bye") this.onBye(event.reason);
		else if (event.type === "reconnecting") {
			this.kernel = "died";
			this.notesWhileAway = [];
			this.note(
				event.reason
					? `The agent's worker is being started again (${event.reason})…`
					: "The agent's worker stopped unexpectedly; waiting for the supervisor to restart it…",
				event.reason ? "info" : "error",
			);
		} else if (event.type === "reconnected") void this.onReconnected(event.reason);
		else if (event.type === "kernel_status") this.onKernelStatus(event);
		else if (isSessionLine(event)) {
			const said = describeSessionLine(event);
			if (said) this.note(said.text, said.error ? "error" : "info");
		} else this.onAgentEvent(event);
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
		this.sessionEnded = true;
		const key = this.current.agentKey;
		void this.exit({
			code: 1,
			message: `The agent's worker stopped (${reason}).${key ? ` \`prime-agent agents\` shows its state; \`prime-agent attach ${key}\` continues the session.` : ""}`,
		});
	}

	private onAgentEvent(event: AgentEvent): void {
		this.transcript.show(event, (error) => describeModelFailure(this.current.status().model, error));
		if (event.type === "message_end" && event.message.role === "user") this.onUserMessage(event.message.content);
		else if (event.type === "tool_execution_start") {
			if (event.toolName === "ipython" && this.kernel !== "starting") this.kernel = "busy";
		} else if (event.type === "tool_execution_end") {
			if (event.toolName === "ipython" && (event.result?.details as { status?: string } | undefined)?.status === "died")
				this.kernel = "died";
			else if (event.toolName === "ipython" && this.kernel === "busy") this.kernel = "idle";
			if (event.toolName === "ipython" && this.kernel === "restarting") this.kernel = "restarted";
		}
		this.tui.requestRender();
	}

	/** A user message reached the session: shown unless this view showed it already. */
	private onUserMessage(content: unknown): void {
		const text = contentText(content);
		const shown = this.shownPrompts.indexOf(text);
		if (shown !== -1) this.shownPrompts.splice(shown, 1);
		// Queued (by any view), sent by another view, a schedule or a heartbeat: shown as it reaches the session.
		else this.add(new UserView(text));
	}

	private onKernelStatus(status: KernelStatus): void {
		if (status.phase === "starting") this.kernel = "starting";
		else if (status.phase === "restarting") this.kernel = "restarting";
		else if (status.phase === "failed") {
			this.kernel = "failed";
			this.note(`Python kernel failed to start: ${status.message}`, "error");
		} else this.kernel = this.transcript.runningCells > 0 ? "busy" : "idle";
		this.tui.requestRender();
	}

	private onKey(data: string): { consume?: boolean } | undefined {
		if (this.showingPanel) return undefined;
		if (!matchesKey(data, Key.ctrl("c"))) this.exitPresses = 0;
		if (matchesKey(data, Key.ctrl("o"))) {
			this.transcript.toggleExpanded();
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
			else if (this.editor.getText() !== "") {
				this.editor.setText("");
				// Draws the cleared editor too: a consumed key draws nothing by itself.
				this.setHint("");
			} else if (++this.exitPresses >= 2) void this.exit();
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
				// The session holds it: it runs when the turn ends even if this view has left by then.
				this.current
					.queue(text)
					.catch((error) => this.note(`/${command.name} was not queued: ${errorText(error)}`, "error"));
				this.note(`/${command.name} runs when the turn ends.`);
			} else this.queueMessage(text, "steer");
			return;
		}
		void this.runPrompt(text);
	}

	/**
	 * A message for the running turn: steering (after the current cell) or a follow-up (after the
	 * turn). The session holds it and lists it in every view until the turn reads it.
	 */
	private queueMessage(text: string, how: "steer" | "followUp"): void {
		const delivered = how === "steer" ? this.current.steer(text) : this.current.followUp(text);
		delivered.catch((error) => this.note(`The message did not reach the session: ${errorText(error)}`, "error"));
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
			end = { status: "error", exitCode: ExitCode.modelError, errorMessage: errorText(error) };
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

	/** Report how a run ended (errors the answer did not show). */
	private afterRun(end: LinkRunEnd): void {
		this.setHint("");
		if (end.commandMessage) this.note(end.commandMessage, end.status === "error" ? "error" : "info");
		else if (end.errorMessage) this.note(end.errorMessage, "error");
		this.tui.requestRender();
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
		// A cell that ignored the interrupt and was left running keeps the kernel busy after its call ended.
		const kernel = this.sessionEnded ? "stopped" : this.kernel === "idle" && status.kernelBusy ? "busy" : this.kernel;
		return {
			model: `${status.model.provider}/${status.model.id}`,
			contextTokens: status.contextTokens,
			contextWindow: status.model.contextWindow,
			totalTokens: status.totalTokens,
			cost: status.cost,
			kernel,
			runningChildren: status.runningChildren,
			queued: status.queued.length,
			working: !this.sessionEnded && this.working,
			stopped: this.sessionEnded,
			goal: status.goal,
		};
	}
}
