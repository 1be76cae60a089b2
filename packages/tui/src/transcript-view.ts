import { type Component, Container } from "@mariozechner/pi-tui";
import type { StartedSession } from "prime-agent";
import type { ArchiveReader } from "./components/capsule.js";
import { CellView } from "./components/cell.js";
import { AssistantView, Spaced } from "./components/messages.js";
import { type AgentMessage, addHistory, contentText } from "./transcript.js";

/** An event of the agent loop (answers, tool calls), as the session reports it. */
export type AgentEvent = Parameters<Parameters<StartedSession["agentSession"]["subscribe"]>[0]>[0];

/**
 * The conversation as it is drawn: answers as they stream, cells with their results, and the
 * blocks the app adds (the user's messages, notes). A view only: the app feeds it the session's
 * history and events, and keeps what depends on the session (which user messages to show, the
 * kernel's state).
 */
export class TranscriptView extends Container {
	private streaming: AssistantView | undefined;
	/** Cells whose result has not come yet, by tool call id. */
	private readonly cells = new Map<string, CellView>();
	/** Whether cell results and capsules show in full (Ctrl-O). */
	private expanded = false;

	constructor(private readonly options: { readArchive: ArchiveReader; requestRender(): void }) {
		super();
	}

	/** Add a block to the conversation (a blank line above it). */
	add(block: Component): void {
		this.addChild(new Spaced(block));
	}

	/** Ctrl-O: every cell and capsule shows in full, or collapsed again. */
	toggleExpanded(): void {
		this.expanded = !this.expanded;
		this.invalidate();
	}

	/** Cells shown as running: their result has not come. */
	get runningCells(): number {
		return this.cells.size;
	}

	/**
	 * Show `messages` (the session's active branch) in place of everything shown. A cell without a
	 * result waits for it while the session is `running` (a view attached mid-turn); otherwise it
	 * never gets one and shows as stopped. Returns whether an `ipython` cell is still running.
	 */
	layOut(messages: readonly AgentMessage[], running: boolean): boolean {
		this.clear();
		this.cells.clear();
		this.streaming = undefined;
		let ipythonRunning = false;
		for (const [id, cell] of addHistory((block) => this.add(block), messages, this.cellOptions())) {
			if (running) {
				this.cells.set(id, cell);
				if (cell.toolName === "ipython") ipythonRunning = true;
			} else cell.finish("", true, { status: "aborted" });
		}
		return ipythonRunning;
	}

	/**
	 * Draw what a loop event says of answers and cells; `describeFailure` words a model's error.
	 * User messages are the app's to add.
	 */
	show(event: AgentEvent, describeFailure: (errorMessage: string | undefined) => string): void {
		switch (event.type) {
			case "message_start":
				if (event.message.role === "assistant") this.startAnswer();
				break;
			case "message_update":
				if (event.message.role !== "assistant") break;
				// Attached mid-answer: the answer so far shows from its next update.
				(this.streaming ?? this.startAnswer()).setContent(
					contentText(event.message.content),
					contentText(event.message.content, "thinking"),
				);
				break;
			case "message_end": {
				const message = event.message;
				if (message.role !== "assistant") break;
				// Attached after its last update: the answer shows whole.
				const view = this.streaming ?? this.startAnswer();
				this.streaming = undefined;
				view.setContent(contentText(message.content), contentText(message.content, "thinking"));
				if (message.stopReason === "error") view.setError(describeFailure(message.errorMessage));
				if (message.stopReason === "aborted") view.setError("Turn stopped.");
				break;
			}
			case "tool_execution_start": {
				const cell = new CellView({ ...this.cellOptions(), toolName: event.toolName, args: event.args });
				this.cells.set(event.toolCallId, cell);
				this.add(cell);
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
				break;
		}
	}

	private startAnswer(): AssistantView {
		this.streaming = new AssistantView();
		this.add(this.streaming);
		return this.streaming;
	}

	private cellOptions() {
		return {
			isExpanded: () => this.expanded,
			readArchive: this.options.readArchive,
			requestRender: this.options.requestRender,
		};
	}
}
