import { Editor, Key, matchesKey, type SlashCommand, Text, type TUI } from "@mariozechner/pi-tui";
import type { LinkRunEnd, SessionLink } from "prime-agent";
import { ExitCode, parseSlashCommand } from "prime-agent/view";
import { argumentCompletions, PromptCompletion } from "./autocomplete.js";
import { errorText } from "./error-text.js";
import type { LocalCommands } from "./local-commands.js";
import { style } from "./style.js";
import { editorTheme } from "./theme.js";
import { typeAheadInto } from "./type-ahead.js";

/**
 * What the input asks of the app it belongs to (`InteractiveApp`): the session it sends to, the
 * UI's own commands, and the conversation a prompt or a problem is shown in.
 */
export interface PromptInputHost {
	/** The session the UI drives now. */
	link(): SessionLink;
	/** The UI's own commands: run here at once, never sent to the session, offered beside its commands. */
	readonly local: Pick<LocalCommands, "find" | "list">;
	/** A picker or a question has the editor's place: the keys are its own. */
	showingPanel(): boolean;
	/** Add a note (a problem, what a key did) to the conversation. */
	note(text: string, tone?: "info" | "error"): void;
	/** Show this view's prompt in the conversation as it is sent (see `SessionView.showPrompt`). */
	showPrompt(text: string): void;
	/** Ctrl-O: every cell and capsule in full, or collapsed again. */
	toggleExpanded(): void;
	/** Leave the UI. */
	exit(): Promise<void>;
}

/**
 * What the user types: the editor (a prompt, a slash command, a message for the running turn),
 * the keys the UI answers before the editor (interrupt, expand, leave) and the hint line above the
 * editor that says what a key did. It counts the prompts it sent until each ends (`working`); how
 * a run ended is shown by `afterRun`, for this view's runs and, through the app, for others'.
 */
export class PromptInput {
	readonly editor: Editor;
	readonly hint = new Text("", 1, 0);
	/** This view's prompts not yet ended. */
	private ownRuns = 0;
	private exitPresses = 0;

	constructor(
		private readonly tui: TUI,
		private readonly host: PromptInputHost,
	) {
		this.editor = new Editor(this.tui, editorTheme, { paddingX: 1, autocompleteMaxVisible: 8 });
		this.editor.setAutocompleteProvider(
			new PromptCompletion(
				() => this.slashCommands(),
				() => this.current.status().session.cwd,
			),
		);
		this.editor.onSubmit = (text) => this.submit(text);
		this.tui.addInputListener((data) => this.onKey(data));
	}

	private get current(): SessionLink {
		return this.host.link();
	}

	/** A turn is running: one of this view's prompts, or any other the session runs. */
	get working(): boolean {
		return this.ownRuns > 0 || this.current.status().running;
	}

	/** Put the keys typed before the UI was ready in the editor (see `typeAheadInto`), and say Enter sends them. */
	typeAhead(keys: string): void {
		if (typeAheadInto(this.editor, keys)) this.setHint("Typed while starting: Enter sends it.");
	}

	private onKey(data: string): { consume?: boolean } | undefined {
		if (this.host.showingPanel()) return undefined;
		if (!matchesKey(data, Key.ctrl("c"))) this.exitPresses = 0;
		if (matchesKey(data, Key.ctrl("o"))) {
			this.host.toggleExpanded();
			this.tui.requestRender();
			return { consume: true };
		}
		if (matchesKey(data, Key.ctrl("d"))) {
			if (this.editor.getText() !== "") return undefined;
			void this.host.exit();
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
			} else if (++this.exitPresses >= 2) void this.host.exit();
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
			(error) => this.host.note(`The interrupt did not reach the session: ${errorText(error)}`, "error"),
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
		const local = command && this.host.local.find(command.name);
		if (local && command) {
			local.run(command.args).catch((error) => this.host.note(`/${command.name} failed: ${errorText(error)}`, "error"));
			return;
		}
		if (this.working) {
			if (command) {
				// The session holds it: it runs when the turn ends even if this view has left by then.
				this.current
					.queue(text)
					.catch((error) => this.host.note(`/${command.name} was not queued: ${errorText(error)}`, "error"));
				this.host.note(`/${command.name} runs when the turn ends.`);
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
		delivered.catch((error) => this.host.note(`The message did not reach the session: ${errorText(error)}`, "error"));
		this.tui.requestRender();
	}

	private async runPrompt(text: string): Promise<void> {
		if (!parseSlashCommand(text)) this.host.showPrompt(text);
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
	afterRun(end: LinkRunEnd): void {
		this.setHint("");
		if (end.commandMessage) this.host.note(end.commandMessage, end.status === "error" ? "error" : "info");
		else if (end.errorMessage) this.host.note(end.errorMessage, "error");
		this.tui.requestRender();
	}

	private slashCommands(): SlashCommand[] {
		const commands = this.current.status().commands;
		const session = commands.map((command) => ({
			name: command.name,
			description: command.description,
			...argumentCompletions(command.arguments),
		}));
		const own = this.host.local.list().filter((local) => !commands.some((command) => command.name === local.name));
		return [...session, ...own].sort((a, b) => a.name.localeCompare(b.name));
	}
}
