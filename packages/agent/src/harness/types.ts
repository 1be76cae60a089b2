/**
 * The four kinds of harness entry; `list_<kind>s()` and friends in the kernel follow these names.
 * A procedure is a text entry (steps that worked); skills are another thing, the Python packages
 * of `skills.load`, so the harness never calls its entries skills.
 */
export const HARNESS_KINDS = ["prompt_note", "memory", "procedure", "subagent"] as const;
export type HarnessKind = (typeof HARNESS_KINDS)[number];

/**
 * Kinds as stores and refinement logs written before a rename hold them: read as the new kind (the
 * kernel reads the same), written back under the new name at the next change.
 */
export const LEGACY_KINDS: Readonly<Record<string, HarnessKind>> = { skill: "procedure" };

/** `local`: this session's store (its artifact folder); `global`: the agent home's, shared by every session. */
export type HarnessScope = "local" | "global";
export const HARNESS_SCOPES: readonly HarnessScope[] = ["local", "global"];

/** Headings of the kinds in the prompt index and listings. */
export const KIND_TITLES: Readonly<Record<HarnessKind, string>> = {
	prompt_note: "Prompt notes",
	memory: "Memories",
	procedure: "Procedures",
	subagent: "Sub-agent specs",
};

/** The plural the kernel's `list_<kind>s()` uses (`list_memories` too, for memory). */
export const KIND_LISTERS: Readonly<Record<HarnessKind, string>> = {
	prompt_note: "list_prompt_notes",
	memory: "list_memories",
	procedure: "list_procedures",
	subagent: "list_subagents",
};

/**
 * One entry as stored. Field order is the order written to disk (the Python side writes the same),
 * so a store rewritten with the same entries is byte-identical.
 */
export interface HarnessEntry {
	kind: HarnessKind;
	name: string;
	text: string;
	/** ISO times (UTC, milliseconds). */
	createdAt: string;
	updatedAt: string;
	/** Times the entry was read in full or used (a sub-agent spec given to `rlm(spec=...)`). */
	uses: number;
	/** When it was last used; null while never. */
	lastUsedAt: string | null;
}

/** `harness.json`: every entry of one store, sorted by kind (in `HARNESS_KINDS` order) then name. */
export interface HarnessFile {
	version: 1;
	entries: HarnessEntry[];
}

/** An entry with the store it lives in. */
export interface ScopedEntry extends HarnessEntry {
	scope: HarnessScope;
}

/** What a refinement changed: one edit, with the entry before and after (null: absent). */
export interface RecordedEdit {
	op: "create" | "update" | "delete";
	kind: string;
	name: string;
	scope?: HarnessScope;
	status: "applied" | "failed";
	/** Why the edit failed (validation, conflict, store error). */
	error?: string;
	/** The planner's reason, when it gave one. */
	reason?: string;
	before: HarnessEntry | null;
	after: HarnessEntry | null;
}

export type RefinementTrigger = "command" | "kernel" | "auto-turns" | "auto-compaction" | "rollback";

/**
 * One refinement, as recorded in the session's `refinements.json`. `status`: `applied` (every edit
 * landed), `partial` (some failed), `failed` (none landed, or the plan could not be read),
 * `nothing` (the plan had no edits), `rejected` (the automatic review found nothing worth keeping),
 * `stopped` (the session was stopped or closed during a model call; nothing was changed).
 */
export interface Refinement {
	id: string;
	at: string;
	trigger: RefinementTrigger;
	status: "applied" | "partial" | "failed" | "nothing" | "rejected" | "stopped";
	summary: string;
	instructions?: string;
	/** The review's answer on the automatic path. */
	review?: string;
	/** Set on a rollback: the refinement it undid. */
	rollbackOf?: string;
	edits: RecordedEdit[];
}

export interface RefinementLog {
	version: 1;
	refinements: Refinement[];
}

/** Contract numbers of the continual harness (spec section 7). */
export const HARNESS_LIMITS = {
	/** Prompt index: entries shown per kind, characters of each, refinements listed. */
	indexEntries: 6,
	indexChars: 180,
	indexRefinements: 5,
	/** Planning overview: entries per kind and characters of each; refinements it sees. */
	overviewEntries: 40,
	overviewChars: 240,
	planningRefinements: 20,
	/** Trajectory characters the review and the planning calls see (the newest). */
	reviewChars: 40_000,
	planningChars: 80_000,
	/** Automatic refinement: every this many assistant turns, and after a compaction. */
	autoEveryTurns: 25,
	autoCooldownMs: 20 * 60_000,
	/** An entry unused (not read, used or written) through this many refinements is proposed for retirement. */
	staleAfterRefinements: 5,
	/** Longest entry name and text. */
	nameChars: 64,
	textChars: 20_000,
} as const;

/** The one name no edit may address: the base system prompt is not part of the harness. */
export const BASE_SYSTEM_PROMPT = "base_system_prompt";
