import { type Component, Text, type TUI } from "@mariozechner/pi-tui";
import type { KernelStatus, LinkRunEnd, LinkStatus, SessionEvent, SessionLink } from "prime-agent";
import { describeModelFailure, describeSessionLine, isSessionLine, promptText } from "prime-agent/view";
import type { AppExit } from "./app-exit.js";
import { NoteView, UserView } from "./components/messages.js";
import type { KernelState, StatusInfo } from "./components/status-line.js";
import { errorText } from "./error-text.js";
import type { LocalCommands } from "./local-commands.js";
import { style } from "./style.js";
import { contentText, notInHistory } from "./transcript.js";
import { type AgentEvent, TranscriptView } from "./transcript-view.js";

/**
 * What the session view asks of the app it belongs to (`InteractiveApp`): the session it follows
 * and what an event of that session does beyond the screen (a question, a run's outcome in the
 * hint, leaving). Called while events arrive: each must return without waiting on the view.
 */
export interface SessionViewHost {
	/** The session the UI drives now (the app changes it before `attach`). */
	link(): SessionLink;
	/** A turn is running: one this view started or any other the session runs. */
	working(): boolean;
	/** A cell ignored the interrupt: ask the user (see `LocalCommands.askStillBusy`). */
	askStillBusy(): ReturnType<LocalCommands["askStillBusy"]>;
	/** A run ended (this view's or another's): say how, beside the answer (see `PromptInput.afterRun`). */
	afterRun(end: LinkRunEnd): void;
	/** Leave the UI: the session's worker went away. */
	exit(exit: AppExit): Promise<void>;
}

/**
 * The session as it shows: the header, the conversation (laid out from the session's history, then
 * kept up by its events) and the kernel's state on the status line. It reads the session only
 * through the link's history and events; what the user types is `PromptInput`'s. Of each event it
 * draws what it says: answers and cells in the transcript, notices as notes, a user message once
 * (this view's own prompt shows as it is sent), the worker's restart, the session's end.
 */
export class SessionView {
	readonly header = new Text("", 1, 0);
	readonly transcript: TranscriptView;
	private detachSession: (() => void) | undefined;
	private kernel: KernelState = "not started";
	/** The text of this view's prompts shown already, until the session's user message for each comes. */
	private shownPrompts: string[] = [];
	/** The session has ended (its worker stopped, or this UI closed it in this process). */
	sessionEnded = false;

	constructor(
		private readonly tui: Pick<TUI, "requestRender">,
		private readonly host: SessionViewHost,
	) {
		this.transcript = new TranscriptView({
			readArchive: (id, start, end) => this.current.readArchive(id, start, end),
			requestRender: () => this.tui.requestRender(),
		});
	}

	private get current(): SessionLink {
		return this.host.link();
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

	/** This view's prompt, shown as it is sent: the session's user message for it is not shown again. */
	showPrompt(text: string): void {
		this.add(new UserView(text));
		this.shownPrompts.push(promptText(text));
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

	/** Follow `link` (the host's session now): its conversation laid out, then its events as they come. */
	async attach(link: SessionLink, notices: readonly string[]): Promise<void> {
		this.kernel = link.status().kernelStarted ? "idle" : "not started";
		this.detachSession = link.subscribe((event) => {
			if (this.holding) this.holding.push(event);
			else this.onEvent(event);
		});
		await this.redraw(notices);
	}

	/** Stop following the session's events. */
	detach(): void {
		this.detachSession?.();
		this.detachSession = undefined;
	}

	/** What the session says: loop events, then everything else it reports. */
	private onEvent(event: SessionEvent): void {
		if (event.type === "status") this.tui.requestRender();
		else if (event.type === "run_end") this.host.afterRun(event);
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
		const asked = this.host.askStillBusy();
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
		void this.host.exit({
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

	/** What the status line shows now. */
	status(): StatusInfo {
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
			working: !this.sessionEnded && this.host.working(),
			stopped: this.sessionEnded,
			goal: status.goal,
		};
	}
}
