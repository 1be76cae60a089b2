/**
 * What users queued while the agent worked, held by the session rather than by a view: every view
 * lists the same items, and they run whether a view is attached or not (a view that leaves takes
 * nothing with it).
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";

/** One queued input, as views list it. Plain data (it crosses the socket). */
export interface QueuedInput {
	/**
	 * `steer`: the running turn reads it after the current step; `follow_up`: after the turn would
	 * have ended; `prompt`: a run of its own (a slash command, another prompt) once the runs before
	 * it have ended.
	 */
	kind: "steer" | "follow_up" | "prompt";
	text: string;
}

interface Item {
	input: QueuedInput;
	/** The message handed to the running turn (steering, follow-up): taken when the turn reads it. */
	message?: AgentMessage;
}

/** The session's queue, in the order things were queued. `changed` is called on every change. */
export class InputQueue {
	private items: Item[] = [];

	constructor(private readonly changed: () => void) {}

	list(): QueuedInput[] {
		return this.items.map((item) => ({ ...item.input }));
	}

	/** Queue `input`; the returned function takes it out (its run starts). */
	add(input: QueuedInput, message?: AgentMessage): () => void {
		const item: Item = { input, ...(message ? { message } : {}) };
		this.items.push(item);
		this.changed();
		return () => this.remove((other) => other === item);
	}

	/** The running turn read `message` (the loop hands on the very object it was given). */
	taken(message: unknown): void {
		this.remove((item) => item.message !== undefined && item.message === message);
	}

	/** The session closed: nothing queued will run. */
	clear(): void {
		if (this.items.length === 0) return;
		this.items = [];
		this.changed();
	}

	private remove(match: (item: Item) => boolean): void {
		const index = this.items.findIndex(match);
		if (index === -1) return;
		this.items.splice(index, 1);
		this.changed();
	}
}
