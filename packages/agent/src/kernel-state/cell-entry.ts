import type { BranchEntry } from "./resume.js";

/** What `cellEntry` reads of a session: its leaf, and its entries by id. */
export interface EntryTree {
	readonly leafId: string | null;
	entry(id: string): (BranchEntry & { parentId: string | null; message?: { toolCallId?: string } }) | undefined;
}

/** How far back from the leaf a cell's result is looked for (a save follows its cell at once). */
const LOOK_BACK = 1000;

/**
 * The entry recording the result of the tool call `toolCallId` on the active branch (the newest
 * such, should a model reuse ids), or undefined when it is not recorded (yet).
 */
export function cellEntry(tree: EntryTree, toolCallId: string): string | undefined {
	let id = tree.leafId;
	for (let steps = 0; id !== null && steps < LOOK_BACK; steps++) {
		const entry = tree.entry(id);
		if (!entry) return undefined;
		if (entry.type === "message" && entry.message?.role === "toolResult" && entry.message.toolCallId === toolCallId) {
			return entry.id;
		}
		id = entry.parentId;
	}
	return undefined;
}
