import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeAtomicallySync } from "../archive/session-archive.js";
import { withFileLock } from "../file-lock.js";
import type { BrokerMetrics, Decision, OutcomeCounts } from "../types.js";
import type { WorkflowState } from "../workflow/types.js";

/** What the broker remembers of one recent observation, for deltas. */
export interface RecentObservation {
	id: string;
	tool: string;
	bytes: number;
	lines: number;
	binary: boolean;
	/** The exact text, for small observations only (see `RECENT_TEXT_MAX_BYTES`); older or larger bodies are read from the archive. */
	text: string | null;
	/** `outcomeSignature` of a recognised, structured outcome; null otherwise. */
	signature: string | null;
	/** Normalized headline of that outcome (e.g. `TEST_RESULT PASS 9/9`). */
	headline: string | null;
	counts: OutcomeCounts | null;
}

/** The size index of an observation that left `recent`: enough to find exact-repeat candidates by size. */
export interface OlderObservation {
	id: string;
	tool: string;
	bytes: number;
	binary: boolean;
}

/** The broker's persistent state: one JSON file in the session directory, replaced atomically. */
export interface BrokerState {
	version: 1;
	/** Distinct medium results passed through so far (the seed's two-result grace). */
	graceUsed: number;
	/** Oldest first. */
	recent: RecentObservation[];
	/** Observations older than `recent`, oldest first, bounded by `OLDER_MAX` (absent in older state files). */
	older?: OlderObservation[];
	metrics: BrokerMetrics;
	/** The staged-workflow tracker (absent in older state files; read through `normalizeWorkflow`). */
	workflow?: WorkflowState;
}

export const STATE_FILE = "broker-state.json";
const LOCK_FILE = "broker-state.lock";

/** Recent observations remembered, and the bounds on the text kept with them. */
export const RECENT_MAX = 16;
export const RECENT_TEXT_MAX_BYTES = 64 * 1024;
export const RECENT_TEXT_TOTAL_BYTES = 512 * 1024;
/** Older observations indexed by size for exact-repeat search. */
export const OLDER_MAX = 2_000;

export function emptyMetrics(): BrokerMetrics {
	const decisions: Record<Decision, number> = { "pass-through": 0, "structured-capsule": 0, "delta-capsule": 0 };
	return { decisions, visibleBytesSaved: 0, recovery: { calls: {}, withEvidence: 0, empty: 0 } };
}

export function emptyState(): BrokerState {
	return { version: 1, graceUsed: 0, recent: [], older: [], metrics: emptyMetrics() };
}

function isState(value: unknown): value is BrokerState {
	const v = value as BrokerState | null;
	return (
		typeof v === "object" &&
		v !== null &&
		v.version === 1 &&
		typeof v.graceUsed === "number" &&
		Array.isArray(v.recent) &&
		typeof v.metrics === "object" &&
		v.metrics !== null
	);
}

/**
 * Reads the state; a missing file is a fresh session. An unreadable or corrupted file also starts
 * fresh (the state only tunes later decisions; the archive itself is untouched). The state file is
 * read and written with synchronous calls: it is small, on a local disk, and on the path of every
 * observation, where thread-pool round trips cost more than the reads themselves.
 */
export async function loadState(dir: string): Promise<BrokerState> {
	return loadStateNow(dir);
}

function loadStateNow(dir: string): BrokerState {
	try {
		const parsed: unknown = JSON.parse(readFileSync(join(dir, STATE_FILE), "utf8"));
		if (isState(parsed)) {
			const fresh = emptyMetrics();
			parsed.metrics = {
				decisions: { ...fresh.decisions, ...parsed.metrics.decisions },
				visibleBytesSaved: parsed.metrics.visibleBytesSaved ?? 0,
				recovery: { ...fresh.recovery, ...parsed.metrics.recovery },
			};
			return parsed;
		}
	} catch {
		// Fall through to a fresh state.
	}
	return emptyState();
}

/**
 * Adds an observation to `recent`: keeps the newest `RECENT_MAX`, moves the rest to the size index
 * of older observations, and drops stored text past the total bound (oldest first).
 */
export function addRecent(state: BrokerState, entry: RecentObservation): void {
	const all = [...state.recent, entry];
	const kept = all.slice(-RECENT_MAX);
	const dropped = all.slice(0, all.length - kept.length);
	const older = [
		...(state.older ?? []),
		...dropped.map(({ id, tool, bytes, binary }) => ({ id, tool, bytes, binary })),
	];
	state.older = older.slice(-OLDER_MAX);
	let total = 0;
	for (let i = kept.length - 1; i >= 0; i--) {
		const text = kept[i].text;
		if (text === null) continue;
		const bytes = Buffer.byteLength(text);
		if (total + bytes > RECENT_TEXT_TOTAL_BYTES) kept[i] = { ...kept[i], text: null };
		else total += bytes;
	}
	state.recent = kept;
}

/** Writes the state atomically (temporary file, then rename), so readers never see half a file. */
export async function saveState(dir: string, state: BrokerState): Promise<void> {
	writeState(dir, state);
}

function writeState(dir: string, state: BrokerState): void {
	writeAtomicallySync(join(dir, STATE_FILE), JSON.stringify(state));
}

/**
 * Applies `change` to the newest stored state and stores it, under the session's state lock, so
 * separate processes on one session never lose each other's updates. Only this short
 * read-modify-write holds the lock. Never runs unlocked: a lock that cannot be taken is a `LockError`.
 */
export async function updateState(dir: string, change: (state: BrokerState) => void): Promise<void> {
	await withFileLock(
		join(dir, LOCK_FILE),
		async () => {
			const state = loadStateNow(dir);
			change(state);
			writeState(dir, state);
		},
		{ what: "the broker state" },
	);
}
