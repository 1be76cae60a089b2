import type { SelectItem } from "@mariozechner/pi-tui";
import type { SessionEntry } from "prime-agent";
import { messageText } from "prime-agent/view";

/** One row of `/tree`: an entry of the conversation, indented under the branch it is on. */
export interface TreeRow {
	entry: SessionEntry;
	depth: number;
	/** On the active branch (the path from the first entry to the current leaf). */
	active: boolean;
	label: string;
}

/** Entries worth a row: what was said (user, assistant, host notes shown to the user) and summaries. */
function describe(entry: SessionEntry): string | undefined {
	if (entry.type === "message") {
		const message = entry.message;
		if (message.role === "user") return `you: ${oneLine(messageText(message))}`;
		if (message.role === "assistant") {
			const text = oneLine(messageText(message));
			const calls = message.content.filter((part) => part.type === "toolCall").length;
			if (text) return `agent: ${text}`;
			return calls > 0 ? `agent: (${calls} cell${calls === 1 ? "" : "s"})` : undefined;
		}
		return undefined;
	}
	if (entry.type === "compaction") return "[compacted]";
	if (entry.type === "branch_summary") return `[branch summary] ${oneLine(entry.summary)}`;
	return undefined;
}

function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/**
 * The session tree, depth first with the newest branch last; an entry with several children
 * starts a deeper level for each child beyond the first. Entries without a row (tool results,
 * model changes) pass their depth through.
 */
export function treeRows(entries: readonly SessionEntry[], leafId: string | null): TreeRow[] {
	const children = new Map<string | null, SessionEntry[]>();
	const byId = new Map<string, SessionEntry>();
	for (const entry of entries) {
		const list = children.get(entry.parentId) ?? [];
		list.push(entry);
		children.set(entry.parentId, list);
		byId.set(entry.id, entry);
	}
	// The active branch: from the leaf up to the first entry.
	const active = new Set<string>();
	for (let id = leafId; id !== null && !active.has(id); id = byId.get(id)?.parentId ?? null) active.add(id);
	const rows: TreeRow[] = [];
	const stack: { entry: SessionEntry; depth: number }[] = (children.get(null) ?? [])
		.map((entry) => ({ entry, depth: 0 }))
		.reverse();
	while (stack.length > 0) {
		const { entry, depth } = stack.pop() as { entry: SessionEntry; depth: number };
		const label = describe(entry);
		if (label) rows.push({ entry, depth, active: active.has(entry.id), label });
		const next = children.get(entry.id) ?? [];
		// Pushed in reverse so the first child comes out first and stays at this depth.
		for (let index = next.length - 1; index >= 0; index--)
			stack.push({ entry: next[index] as SessionEntry, depth: depth + (index > 0 ? 1 : 0) });
	}
	return rows;
}

/** The rows as picker items: value is the entry id; the active branch is marked with `•`. */
export function treeItems(rows: readonly TreeRow[], leafId: string | null): SelectItem[] {
	return rows.map((row) => ({
		value: row.entry.id,
		label: `${"  ".repeat(row.depth)}${row.entry.id === leafId ? "◆" : row.active ? "•" : "·"} ${row.label}`,
	}));
}

/**
 * Where picking an entry leaves the conversation: a user message is taken back (its text goes to
 * the editor, the branch moves to its parent) so it can be edited and sent again; any other entry
 * becomes the point the next message continues from.
 */
export function branchTarget(entry: SessionEntry): { leafId: string | null; editorText?: string } {
	if (entry.type === "message" && entry.message.role === "user")
		return { leafId: entry.parentId, editorText: messageText(entry.message) };
	return { leafId: entry.id };
}
