/** The durable task state of one session: what the model is doing now and what it must not lose. */
export interface TaskSnapshot {
	focus: string | null;
	/** Open work items, in the order they were added. Completed items leave the list. */
	openItems: { id: string; text: string }[];
	/** Observation ids kept at hand (`obs_...`), in the order they were pinned. */
	pins: string[];
	/** Sequence of the next item id (`item_N`); never reused, even after items complete. */
	nextItem: number;
}

export const EMPTY_TASK: TaskSnapshot = Object.freeze({
	focus: null,
	openItems: [],
	pins: [],
	nextItem: 1,
}) as TaskSnapshot;

export const TASK_LIMITS = {
	focusMaxChars: 1000,
	itemMaxChars: 500,
	openItemsMax: 50,
	pinsMax: 50,
} as const;

/** One change request. Fields are applied in this order: focus, add, complete, pin, unpin. */
export interface TaskUpdate {
	/** New focus text; `null` or an empty string clears it. */
	focus?: string | null;
	add?: string[];
	/** Item ids to complete (`item_N`). */
	complete?: string[];
	pin?: string[];
	unpin?: string[];
}

export class TaskUpdateError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "TaskUpdateError";
	}
}

/**
 * Applies an update without touching `snapshot`. Pure; throws `TaskUpdateError` (saying what is
 * allowed) for an unknown item, over-long text or too many entries, leaving the snapshot unchanged.
 */
export function applyTaskUpdate(
	snapshot: TaskSnapshot,
	update: TaskUpdate,
): { snapshot: TaskSnapshot; changes: string[] } {
	const next: TaskSnapshot = {
		focus: snapshot.focus,
		openItems: [...snapshot.openItems],
		pins: [...snapshot.pins],
		nextItem: snapshot.nextItem,
	};
	const changes: string[] = [];
	if (update.focus !== undefined) {
		const focus = update.focus === null ? "" : update.focus.trim();
		if (focus.length > TASK_LIMITS.focusMaxChars) {
			throw new TaskUpdateError(
				`focus is ${focus.length} characters; at most ${TASK_LIMITS.focusMaxChars} are allowed`,
			);
		}
		next.focus = focus === "" ? null : focus;
		changes.push(next.focus === null ? "cleared focus" : "set focus");
	}
	for (const raw of update.add ?? []) {
		// An item is one line in the rendered task, so inner newlines become spaces.
		const text = raw.replace(/\s+/g, " ").trim();
		if (text === "") throw new TaskUpdateError("an item needs some text");
		if (text.length > TASK_LIMITS.itemMaxChars) {
			throw new TaskUpdateError(
				`item text is ${text.length} characters; at most ${TASK_LIMITS.itemMaxChars} are allowed`,
			);
		}
		if (next.openItems.length >= TASK_LIMITS.openItemsMax) {
			throw new TaskUpdateError(`${TASK_LIMITS.openItemsMax} items are already open; complete some first`);
		}
		const id = `item_${next.nextItem++}`;
		next.openItems.push({ id, text });
		changes.push(`added ${id}`);
	}
	for (const id of update.complete ?? []) {
		const at = next.openItems.findIndex((item) => item.id === id);
		if (at === -1) {
			const open = next.openItems.map((item) => item.id).join(", ") || "none";
			throw new TaskUpdateError(`no open item ${JSON.stringify(id)}; open items: ${open}`);
		}
		next.openItems.splice(at, 1);
		changes.push(`completed ${id}`);
	}
	for (const id of update.pin ?? []) {
		if (next.pins.includes(id)) continue;
		if (next.pins.length >= TASK_LIMITS.pinsMax) {
			throw new TaskUpdateError(`${TASK_LIMITS.pinsMax} observations are already pinned; unpin some first`);
		}
		next.pins.push(id);
		changes.push(`pinned ${id}`);
	}
	for (const id of update.unpin ?? []) {
		const at = next.pins.indexOf(id);
		if (at === -1) {
			throw new TaskUpdateError(`${JSON.stringify(id)} is not pinned; pinned: ${next.pins.join(", ") || "none"}`);
		}
		next.pins.splice(at, 1);
		changes.push(`unpinned ${id}`);
	}
	return { snapshot: next, changes };
}

export function isEmptyTask(snapshot: TaskSnapshot): boolean {
	return snapshot.focus === null && snapshot.openItems.length === 0 && snapshot.pins.length === 0;
}

/** Quoted text that cannot close the surrounding tag. */
function quote(text: string): string {
	return JSON.stringify(text).replaceAll("</", "<\\/");
}

/**
 * The `<prime_context_task>` message, sections in seed order, empty sections left out. Pure and
 * timestamp-free, so an unchanged state renders the same bytes. Null when there is nothing to show.
 */
export function renderTask(snapshot: TaskSnapshot, options: { rootRequest?: string | null } = {}): string | null {
	const sections: string[] = [];
	if (options.rootRequest) sections.push(`ROOT_REQUEST\n${quote(options.rootRequest)}`);
	if (snapshot.focus) sections.push(`FOCUS\n${quote(snapshot.focus)}`);
	if (snapshot.openItems.length > 0) {
		const items = snapshot.openItems.map((item) => `- [${item.id}] ${item.text.replaceAll("</", "<\\/")}`);
		sections.push(`OPEN_ITEMS\n${items.join("\n")}`);
	}
	if (snapshot.pins.length > 0) sections.push(`PINNED_OUTPUTS\n${snapshot.pins.map((id) => `- ${id}`).join("\n")}`);
	if (sections.length === 0) return null;
	return `<prime_context_task>\n${sections.join("\n\n")}\n</prime_context_task>`;
}
