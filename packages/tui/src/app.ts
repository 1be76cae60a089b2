import { type Component, Container, type Editor, type Terminal, TUI } from "@mariozechner/pi-tui";
import type { InteractiveContext, SessionChanges, SessionLink } from "prime-agent";
import { captureConsole, sameSession } from "prime-agent/view";
import type { AppExit } from "./app-exit.js";
import { QueuedInputs } from "./components/queued-inputs.js";
import { StatusLine } from "./components/status-line.js";
import { errorText } from "./error-text.js";
import { type CommandHost, LOCAL_COMMANDS, type LocalCommands } from "./local-commands.js";
import { PromptInput } from "./prompt-input.js";
import { SessionView } from "./session-view.js";
import type { TranscriptView } from "./transcript-view.js";

export type { AppExit } from "./app-exit.js";

/**
 * The interactive terminal UI over one session at a time: the conversation (answers, cells,
 * capsules, notes), the editor and the status line. It drives the session only through its
 * `SessionLink` (a background worker's, or one in this process), so it is a pure view: what it
 * shows comes from the link's events; switching sessions (`/resume`, `/model`, `/fork`, `/new`)
 * goes through the command line's `switchSession`. The app lays the screen out, holds which
 * session it drives, and wires its parts: `SessionView` draws what the session says,
 * `PromptInput` answers what the user types, the UI's own commands (`local-commands.ts`) open
 * pickers and questions in the editor's place.
 */
export class InteractiveApp implements CommandHost {
	readonly tui: TUI;
	readonly transcript: TranscriptView;
	readonly editor: Editor;
	/** The header, the conversation and the kernel's state, from the session's history and events. */
	private readonly view: SessionView;
	/** The editor, the keys the UI answers and the hint line. */
	private readonly input: PromptInput;
	/** Where the editor is: a picker or a question takes its place while it is open. */
	private readonly inputArea = new Container();
	/** Pickers and questions open, the newest shown (see `showPanel`). */
	private readonly panels: Component[] = [];
	private readonly statusLine: StatusLine;
	/** What the session holds queued (every view shows the same), above the editor. */
	private readonly queuedInputs: QueuedInputs;
	private current: SessionLink;
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
		this.local = LOCAL_COMMANDS(this);
		this.view = new SessionView(this.tui, {
			link: () => this.current,
			working: () => this.working,
			askStillBusy: () => this.local.askStillBusy(),
			afterRun: (end) => this.input.afterRun(end),
			exit: (exit) => this.exit(exit),
		});
		this.transcript = this.view.transcript;
		this.input = new PromptInput(this.tui, {
			link: () => this.current,
			local: this.local,
			showingPanel: () => this.showingPanel,
			note: (text, tone) => this.note(text, tone),
			showPrompt: (text) => this.view.showPrompt(text),
			toggleExpanded: () => this.transcript.toggleExpanded(),
			exit: () => this.exit(),
		});
		this.editor = this.input.editor;
		this.statusLine = new StatusLine(() => this.view.status());
		this.queuedInputs = new QueuedInputs(() => this.current.status().queued);
		this.tui.addChild(this.view.header);
		this.tui.addChild(this.transcript);
		this.tui.addChild(this.queuedInputs);
		this.tui.addChild(this.input.hint);
		this.inputArea.addChild(this.editor);
		this.tui.addChild(this.inputArea);
		this.tui.addChild(this.statusLine);
		this.tui.setFocus(this.editor);
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

	/** Put the keys typed before the UI was ready in the editor, unsent (see `typeAheadInto`). */
	typeAhead(keys: string): void {
		this.input.typeAhead(keys);
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
		return this.input.working;
	}

	/** Add a note (a command's answer, a problem) to the conversation. */
	note(text: string, tone: "info" | "error" = "info"): void {
		this.view.note(text, tone);
	}

	/** Add a block to the conversation (a blank line above it). */
	add(block: Component): void {
		this.view.add(block);
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
		this.view.detach();
		try {
			this.farewell = await this.current.close();
		} catch (error) {
			this.farewell = errorText(error);
		}
		// A session in this process ends with the UI (a worker's goes on when the view detaches): the
		// last frame, left on the terminal, says so rather than what ran before.
		if (this.current.agentKey === undefined) this.view.sessionEnded = true;
		if (this.view.sessionEnded) await this.drawStatusLine();
		this.stop();
		this.finish?.(exit);
	}

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
		this.view.detach();
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
		this.view.detach();
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

	/** Lay the conversation out again from the session's active branch (after `/tree`; see `SessionView.redraw`). */
	redraw(): Promise<void> {
		return this.view.redraw();
	}

	/** This view's `/tree` is moving the conversation (its `branched` event needs no redraw). */
	get branching(): boolean {
		return this.view.branching;
	}

	set branching(moving: boolean) {
		this.view.branching = moving;
	}

	private async attach(link: SessionLink, notices: readonly string[]): Promise<void> {
		this.current = link;
		await this.view.attach(link, notices);
	}
}
