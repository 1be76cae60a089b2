/**
 * Public contracts of Prime Context. Host-independent: a host (our agent, the CLI, anything else)
 * hands the broker a final tool result and shows the model whatever `text` comes back.
 */

import type { WorkflowState } from "./workflow/types.js";

/** What the model sees for one observation. */
export type Decision = "pass-through" | "structured-capsule" | "delta-capsule";

/** Which text was archived: the visible tool result, or the tool's complete output file. */
export type ObservationSource = "visible-tool-result" | "public-complete-output";

/** A final tool result, as the host knows it. */
export interface ObservationInput {
	/** Tool name, e.g. `ipython`, `bash`, `run`. */
	tool: string;
	/** The text the tool would show the model (possibly already capped by the tool). */
	text: string;
	/**
	 * Path of the tool's complete output, if it has one (e.g. the kernel's full-output file).
	 * Archived instead of `text` when readable; `text` is the fallback.
	 */
	fullOutputPath?: string;
	/** The tool reported an error. A tool error never becomes success-shaped text. */
	isError: boolean;
	/** Exit status of the command, when known. */
	exitCode?: number | null;
	/** The command that produced the output, when known. */
	command?: string;
	/** Fraction (0..1) of the model's context window in use now; shrinks capsule budgets as it rises. */
	contextUsage?: number;
}

/** The broker's answer for one observation. */
export interface ObservationResult {
	/** Observation id, `obs_` followed by a zero-padded per-session sequence number. */
	id: string;
	decision: Decision;
	/** What the model should see: the original text, a capsule, or a delta capsule. */
	text: string;
	source: ObservationSource;
	/** Bytes and lines of the archived text. */
	bytes: number;
	lines: number;
	/** The outcome line (`TEST_RESULT FAIL 2 failed, 7 passed`, `COMMAND_RESULT FAIL exit 2`), or null when nothing is known. */
	headline: string | null;
	/** False when the archive could not be written; `text` then carries the original output. */
	archived: boolean;
	/** Why archiving failed, when it did. */
	archiveError?: string;
	/** Why the broker's state (metrics, recent outcomes) could not be updated; the result itself is complete. */
	stateError?: string;
}

/** Broker configuration (file: `prime-context.json`, project values over global values). */
export interface ContextConfig {
	enabled: boolean;
	/** Results at or above this many bytes become structured capsules. Default 24576. */
	minTextBytes: number;
	/** Upper bound of a capsule's size. Default 6144, at least 512. */
	capsuleMaxBytes: number;
	/** Budget for human-facing reads (`/pc read`, CLI `read`); also an upper bound for model recovery. */
	readMaxBytes: number;
	/** Old observations leave the prompt for a one-line stub when that pays (see `planAgeing`). Default true. */
	ageing: boolean;
	/** The newest this many observations are never aged. Default 3. */
	ageingWindow: number;
}

export const DEFAULT_CONFIG: ContextConfig = {
	enabled: true,
	minTextBytes: 24_576,
	capsuleMaxBytes: 6_144,
	readMaxBytes: 65_536,
	ageing: true,
	ageingWindow: 3,
};

/** Seed caps for model-facing recovery. */
export const RECOVERY_LIMITS = {
	listMax: 20,
	readMaxLines: 80,
	searchMaxMatches: 10,
	contextLinesMax: 20,
	searchDefaultObservations: 20,
	responseMaxBytes: 12_288,
} as const;

/** One archived observation's metadata (never its body). */
export interface ObservationRecord {
	id: string;
	tool: string;
	source: ObservationSource;
	decision: Decision;
	bytes: number;
	lines: number;
	isError: boolean;
	exitCode: number | null;
	command: string | null;
	/** Archive time, ISO 8601. */
	archivedAt: string;
	/** The content is not valid UTF-8 text (binary or invalid encoding); bytes are still exact. */
	binary: boolean;
}

/** Recognised outcome of a test run, build, lint or command, parsed from result-shaped lines. */
export interface Outcome {
	/** Which parser recognised it: `pytest`, `unittest`, `jest`, `vitest`, `mocha`, `node-test`, `tap`, `tsc`, `eslint`, `cargo`, `go`, `maven`, `gradle`, `generic`, `exit-status`. */
	runner: string | null;
	/** `fail` whenever any failure evidence exists; `pass` only with a clean terminal summary. */
	status: "pass" | "fail" | "unknown";
	/** Counts from the terminal summary line, when present. */
	counts: OutcomeCounts | null;
	/** Every failing test id seen, in first-seen order, without duplicates (the first 5,000). */
	failingIds: string[];
	/** Failing ids seen past the first 5,000: counted, not kept. */
	unrecordedFailingIds?: number;
	/**
	 * The marks failing ids were printed under (`FAILED`, `ERROR`, `✖`...; see `markAround`), in
	 * first-seen order, each with how many distinct ids it preceded (or followed): a search for a mark
	 * finds their lines. An id may count under two marks, and an id printed under none under no mark.
	 */
	failingIdMarks?: { mark: string; ids: number }[];
	/**
	 * The recorded failing ids printed under no mark (a section header's short name among them, which
	 * a capsule lists as part of a whole id when it is one).
	 */
	unmarkedFailingIds?: string[];
	/** Failing ids past the recorded ones (of the first 100,000) printed under no mark. */
	unmarkedUnrecordedIds?: number;
	/** Exceptions from `Type: message` lines or a bare type, with 1-based line numbers. */
	exceptions: { type: string; message: string; line: number }[];
	/** Distinct exceptions seen past the first 500 (and the late types): counted, not kept. */
	unrecordedExceptions?: number;
	/** Source locations (`file:line`), with the 1-based output line they appear on. */
	locations: { file: string; line: number; column?: number; at: number }[];
	/** 1-based line numbers of result-shaped terminal lines (summaries, status). */
	summaryLines: number[];
	/** Exit status, when the output states it or the host knew it. */
	exitCode: number | null;
	/**
	 * Each test suite's result, in output order, when the output holds several (two runners in one
	 * command, `npm test` over workspaces, logs put together; the first 99 and the last); `counts` is
	 * then their sum. Absent for one suite.
	 */
	suites?: SuiteResult[];
	/** Suites between the listed ones: how many, and how many of them failed (their counts are in the sum). */
	unlistedSuites?: { suites: number; failed: number };
}

/** One suite's summary: its runner, counts and verdict, and the line of its last result line. */
export interface SuiteResult {
	runner: string;
	counts: OutcomeCounts;
	line: number;
	status: "pass" | "fail" | "unknown";
}

export interface OutcomeCounts {
	passed?: number;
	failed?: number;
	skipped?: number;
	errors?: number;
	todo?: number;
	xfailed?: number;
	xpassed?: number;
	total?: number;
}

/** Session-local broker metrics (the seed's status figures). */
export interface BrokerMetrics {
	decisions: Record<Decision, number>;
	/** Bytes of original output the model did not have to see (original minus visible, summed). */
	visibleBytesSaved: number;
	/** Recovery calls by action; of the reads and searches, how many returned evidence (lines, or a hit) and how many none. */
	recovery: { calls: Record<string, number>; withEvidence: number; empty: number };
}

/**
 * The observation broker of one session. Decides once per observation, when the result is final.
 * Deterministic: the same inputs in the same order (from the same starting state) give the same
 * results. Its state (recent outcomes for deltas, the medium-result grace count, metrics) is kept
 * in the session directory so separate processes on one session see one broker.
 */
export interface ObservationBroker {
	observe(input: ObservationInput): Promise<ObservationResult>;
	metrics(): Promise<BrokerMetrics>;
	/** The staged-workflow tracker's state (kept with the broker's). */
	workflow(): Promise<WorkflowState>;
	/** Recovery actions report here so status can say whether recovery found evidence. */
	recordRecovery(action: string, returnedEvidence: boolean): Promise<void>;
}
