import type { AgentMessage, ThinkingLevel } from "@mariozechner/pi-agent-core";
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";

export const SESSION_FORMAT_VERSION = 1;

/** First line of every session file. */
export interface SessionHeader {
	type: "session";
	version: number;
	id: string;
	/** ISO time the session was created. */
	timestamp: string;
	/** Working directory the session runs in. */
	cwd: string;
	/** For a fork: path of the session file it was forked from; for a sub-agent: its parent's session file. */
	parentSession?: string;
	/** For a sub-agent: the parent's entry (the assistant message whose cell spawned it). */
	parentEntryId?: string | null;
	/** For a sub-agent: its id, name and depth (the root is depth 0). */
	rlmChild?: { id: string; name: string; depth: number };
}

interface EntryBase {
	id: string;
	/** The entry this one follows; `null` for the first entry. Entries form a tree. */
	parentId: string | null;
	/** ISO time of the append. */
	timestamp: string;
}

/** A message of the conversation, exactly as the agent loop produced it. */
export interface MessageEntry extends EntryBase {
	type: "message";
	message: AgentMessage;
}

export interface ModelChangeEntry extends EntryBase {
	type: "model_change";
	provider: string;
	modelId: string;
}

export interface ThinkingLevelChangeEntry extends EntryBase {
	type: "thinking_level_change";
	thinkingLevel: ThinkingLevel;
}

/**
 * Everything before `firstKeptEntryId` on the branch is replaced by `summary` when the context
 * is rebuilt.
 */
export interface CompactionEntry extends EntryBase {
	type: "compaction";
	summary: string;
	firstKeptEntryId: string;
	tokensBefore: number;
	details?: unknown;
}

/** Summary of a branch that was left, attached where the new branch starts. */
export interface BranchSummaryEntry extends EntryBase {
	type: "branch_summary";
	fromId: string;
	summary: string;
}

/** State kept by an extension or a capability. Never sent to the model. */
export interface CustomEntry extends EntryBase {
	type: "custom";
	customType: string;
	data: unknown;
}

/** A message injected by the host or an extension. Sent to the model as user content. */
export interface CustomMessageEntry extends EntryBase {
	type: "custom_message";
	customType: string;
	content: string | (TextContent | ImageContent)[];
	/** Whether a user interface shows it. */
	display: boolean;
	details?: unknown;
}

export type SessionEntry =
	| MessageEntry
	| ModelChangeEntry
	| ThinkingLevelChangeEntry
	| CompactionEntry
	| BranchSummaryEntry
	| CustomEntry
	| CustomMessageEntry;

/** An entry as given to `append`: the session fills in id, parentId and timestamp. */
export type NewEntry = SessionEntry extends infer E
	? E extends SessionEntry
		? Omit<E, "id" | "parentId" | "timestamp">
		: never
	: never;
