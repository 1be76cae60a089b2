import type { SessionArchive } from "../archive/types.js";
import type { ConfigProblem } from "../config/index.js";
import type { TaskStore } from "../task/index.js";
import type { ContextConfig, ObservationBroker } from "../types.js";

export type RecoveryRequest =
	| { action: "list"; limit?: number }
	| { action: "read"; id: string; startLine?: number; endLine?: number }
	| {
			action: "search";
			query: string;
			/** Without an id, the newest `limit` observations are searched. */
			id?: string;
			contextLines?: number;
			matchOffset?: number;
			maxMatches?: number;
			limit?: number;
	  }
	| { action: "status" }
	| {
			action: "update";
			/** New focus; `null` or `""` clears it. */
			focus?: string | null;
			add?: string[];
			complete?: string[];
			pin?: string[];
			unpin?: string[];
	  };

export type RecoveryAction = RecoveryRequest["action"];

/** What a recovery call gives back. `text` is what the caller shows; it is never archived again. */
export interface RecoveryResponse {
	action: RecoveryAction | "invalid";
	text: string;
	/** The call failed (bad arguments, unknown id, damaged archive); `text` says why and what is allowed. */
	isError: boolean;
	/** A non-empty read, at least one search hit, a non-empty list, or a status/update answer. */
	evidence: boolean;
	/** Something was cut to fit the budget; `text` says how to page on. */
	truncated: boolean;
}

/** Everything a recovery action may use. Hosts build one per session (see `openContextSession`). */
export interface RecoveryContext {
	sessionId: string;
	archive: SessionArchive;
	tasks: TaskStore;
	config: ContextConfig;
	configProblems?: ConfigProblem[];
	/** Receives `recordRecovery` for every call and supplies status metrics; absent for a bare archive. */
	broker?:
		| (Pick<ObservationBroker, "metrics" | "recordRecovery"> & Partial<Pick<ObservationBroker, "workflow">>)
		| null;
}

/**
 * How follow-up actions are spelled in notes, so a model sees `prime_context action=read ...` and a
 * person at a terminal sees `prime-context read ...`.
 */
export interface RecoveryHints {
	read(id: string, startLine: number, endLine: number): string;
	search(args: {
		id?: string;
		query: string;
		matchOffset?: number;
		contextLines?: number;
		maxMatches?: number;
		/** Observations searched when there is no id. */
		limit?: number;
	}): string;
	list(limit: number): string;
}

/** Caps for one audience. */
export interface RecoveryLimits {
	listMax: number;
	readMaxLines: number;
	searchMaxMatches: number;
	searchDefaultObservations: number;
	contextLinesMax: number;
	responseMaxBytes: number;
	/** Longest single line shown by read / search before it is cut with a marker. */
	readLineMaxBytes: number;
	searchLineMaxBytes: number;
}

export interface RecoveryOptions {
	/** `model` (default) applies the seed's caps; `human` uses the configured readMaxBytes budget. */
	audience?: "model" | "human";
	hints?: RecoveryHints;
}
