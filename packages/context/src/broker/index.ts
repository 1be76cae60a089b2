/**
 * The observation broker: decides once per final tool result whether the model sees it as it is,
 * as a structured capsule, or as a delta; archives every observation's exact bytes first.
 */
import { stat } from "node:fs/promises";
import type { ArchiveWriter, SessionArchive } from "../archive/types.js";
import { capsuleBudgets } from "../capsule/index.js";
import { outcomeHeadline } from "../capsule/status.js";
import type { BrokerMetrics, ContextConfig, ObservationBroker, ObservationInput, ObservationResult } from "../types.js";
import { cleanLinesFor, normalizeWorkflow, observeWorkflow, workflowObservation } from "../workflow/index.js";
import { decide, type EarlierBodies, type Verdict } from "./decide.js";
import { type Scan, scanObservation } from "./scan.js";
import { BODY_MAX_BYTES, openObservationSource, streamsEqual, visibleTextSource } from "./source.js";
import {
	addRecent,
	type BrokerState,
	loadState,
	RECENT_TEXT_MAX_BYTES,
	type RecentObservation,
	updateState,
} from "./state.js";
import { TextCache } from "./text-cache.js";

export { TextCheck } from "../archive/text-check.js";
export { decide, RULES, type Verdict } from "./decide.js";
export { type Scan, scanObservation } from "./scan.js";
export { closeSelectionThread, selectionThreadJobs, selectionThreadRunning } from "./selection-thread.js";
export { LineSplitter, openObservationSource, streamsEqual, visibleTextSource } from "./source.js";
export { type BrokerState, loadState, type RecentObservation, STATE_FILE, saveState } from "./state.js";

export interface BrokerOptions {
	archive: SessionArchive;
	config: ContextConfig;
}

async function isDirectory(path: string): Promise<boolean> {
	return stat(path).then(
		(info) => info.isDirectory(),
		() => false,
	);
}

function describe(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** An archived observation's bytes as a stream, rebuilt from its lines (text observations only). */
async function* archivedBytes(archive: SessionArchive, id: string): AsyncIterable<Buffer> {
	for await (const { text } of archive.lines(id)) yield Buffer.from(`${text}\n`, "utf8");
}

function earlierBodies(
	archive: SessionArchive,
	state: BrokerState,
	scan: Scan,
	input: ObservationInput,
	texts: TextCache,
): EarlierBodies {
	const body = async (earlierId: string, bytes: number) => {
		if (bytes > BODY_MAX_BYTES) return null;
		try {
			return await archive.readBytes(earlierId);
		} catch {
			return null;
		}
	};
	const text = async (earlierId: string, bytes: number) => {
		const cached = texts.get(earlierId);
		if (cached !== undefined) return cached;
		const decoded = (await body(earlierId, bytes))?.toString("utf8") ?? null;
		if (decoded !== null) texts.set(earlierId, decoded);
		return decoded;
	};
	/** Exact comparison with one earlier observation of the same size: in memory when small, streamed when large. */
	const equals: EarlierBodies["equals"] = async (earlier) => {
		try {
			const own = scan.body();
			if (own !== null) {
				const other = earlier.text !== null ? Buffer.from(earlier.text, "utf8") : await body(earlier.id, earlier.bytes);
				return other?.equals(own) === true;
			}
			// Lines are text: a large binary observation is not compared.
			if (earlier.binary) return false;
			const source = await openObservationSource(input);
			return await streamsEqual(source.chunks(), archivedBytes(archive, earlier.id), scan.bytes);
		} catch {
			// An unreadable earlier observation simply is not a match.
			return false;
		}
	};
	return {
		recent: [...state.recent].reverse(),
		older: [...(state.older ?? [])].reverse(),
		body,
		text,
		equals,
	};
}

function remember(state: BrokerState, id: string, input: ObservationInput, scan: Scan, verdict: Verdict): void {
	const keepText = scan.hasBody && !scan.binary && scan.bytes <= RECENT_TEXT_MAX_BYTES;
	const entry: RecentObservation = {
		id,
		tool: input.tool,
		bytes: scan.bytes,
		lines: scan.lines,
		binary: scan.binary,
		text: keepText ? scan.text() : null,
		signature: verdict.signature,
		headline: verdict.headline,
		counts: scan.outcome.counts,
	};
	addRecent(state, entry);
	if (verdict.consumedGrace) state.graceUsed++;
}

/**
 * Counts a decision. Bytes saved are the complete output's bytes (not only the visible text handed
 * in, which a host may have capped) minus what the model sees instead; a pass-through saves nothing.
 */
function count(metrics: BrokerMetrics, result: ObservationResult): void {
	metrics.decisions[result.decision]++;
	if (result.decision !== "pass-through") {
		metrics.visibleBytesSaved += Math.max(0, result.bytes - Buffer.byteLength(result.text));
	}
}

/** Recovery actions whose answer is evidence from the archive (or its absence); the others are only counted. */
const EVIDENCE_ACTIONS: ReadonlySet<string> = new Set(["read", "search"]);

function describeStateError(error: unknown): string {
	return `the broker state (metrics, recent outcomes) was not updated: ${describe(error)}; this result is complete, but later deltas and status figures will not know it`;
}

/**
 * Creates the broker of one session. Its state (grace count, recent observations, metrics) lives
 * in the session directory (`archive.dir`): each observation decides on the state as it reads it,
 * then stores its changes under the session's state lock (re-reading the newest state first), so
 * separate processes on one session lose nothing of each other's.
 */
export async function createBroker(options: BrokerOptions): Promise<ObservationBroker> {
	const { archive, config } = options;
	const dir = archive.dir;
	const texts = new TextCache();

	/** Stores what this observation changes in the state, under the lock; a failure is reported, not hidden. */
	async function record(result: ObservationResult, apply: (state: BrokerState) => void): Promise<ObservationResult> {
		try {
			await updateState(dir, (state) => {
				apply(state);
				count(state.metrics, result);
			});
			return result;
		} catch (error) {
			return { ...result, stateError: describeStateError(error) };
		}
	}

	async function observe(input: ObservationInput): Promise<ObservationResult> {
		// Decisions read the state as it is now; only the update at the end holds the lock. The state is
		// read while the observation's archive is created (neither touches the other's files).
		let archiveError: string | undefined;
		const created = archive.create().catch((error: unknown) => {
			archiveError = describe(error);
			return null;
		});
		const state = await loadState(dir);
		let writer: ArchiveWriter | null = await created;
		let scan: Scan;
		try {
			scan = await scanObservation(await openObservationSource(input), input, writer);
		} catch {
			// The complete-output file failed mid-read: start over from the visible text.
			await writer?.abort().catch(() => {});
			writer = null;
			try {
				writer = archiveError === undefined ? await archive.create() : null;
			} catch (retryError) {
				archiveError = describe(retryError);
			}
			scan = await scanObservation(visibleTextSource(input.text), input, writer);
		}
		archiveError ??= scan.archiveError;
		// The workflow tracker takes in every outcome, archived or not, on the newest state.
		const facts = { isError: input.isError, exitCode: input.exitCode };
		const track = (id: string) => (latest: BrokerState) => {
			latest.workflow = observeWorkflow(
				normalizeWorkflow(latest.workflow),
				workflowObservation(id, scan.outcome, facts),
			);
		};

		const fallback = async (reason: string): Promise<ObservationResult> => {
			await writer?.abort().catch(() => {});
			const result: ObservationResult = {
				id: "",
				decision: "pass-through",
				text: input.text,
				source: scan.source,
				bytes: scan.bytes,
				lines: scan.lines,
				headline: outcomeHeadline(scan.outcome, facts),
				archived: false,
				archiveError: `observation not archived (${reason}); the original output is shown instead. Check that the Prime Context storage directory is writable and has free space.`,
			};
			// Nothing was archived: there may be no session directory to keep state in either.
			return archiveError === undefined ? record(result, track("")) : result;
		};
		if (!writer || archiveError !== undefined) return fallback(archiveError ?? "archive unavailable");
		// The archive's last chunks are compressed and written first; the sync to disk then runs while the
		// decision is made (a failure there is reported by `finish`).
		await writer.flush();

		let verdict: Verdict;
		try {
			verdict = config.enabled
				? await decide({
						id: writer.id,
						input,
						scan,
						budgets: capsuleBudgets(config, input.contextUsage),
						graceUsed: state.graceUsed,
						earlier: earlierBodies(archive, state, scan, input, texts),
						workflow: cleanLinesFor(
							state.workflow,
							workflowObservation(writer.id, scan.outcome, facts),
							capsuleBudgets(config, input.contextUsage).clean,
						),
					})
				: {
						decision: "pass-through" as const,
						text: input.text,
						reason: "disabled",
						consumedGrace: false,
						signature: null,
						headline: null,
					};
		} catch (error) {
			// The archive's file is open until sealed or dropped: an unexpected failure drops it.
			await writer.abort().catch(() => {});
			throw error;
		}
		try {
			await writer.finish({
				tool: input.tool,
				source: scan.source,
				decision: verdict.decision,
				isError: input.isError,
				exitCode: input.exitCode ?? null,
				command: input.command ?? null,
			});
		} catch (error) {
			return fallback(describe(error));
		}
		const id = writer.id;
		// A visible text is its own decoded body: held for the next observations' deltas at no cost.
		const own = scan.source === "visible-tool-result" ? scan.text() : null;
		if (own !== null) texts.set(id, own);
		const result: ObservationResult = {
			id,
			decision: verdict.decision,
			text: verdict.text,
			source: scan.source,
			bytes: scan.bytes,
			lines: scan.lines,
			headline: outcomeHeadline(scan.outcome, facts),
			archived: true,
		};
		return record(result, (latest) => {
			remember(latest, id, input, scan, verdict);
			track(id)(latest);
		});
	}

	return {
		observe,
		async metrics() {
			return (await loadState(dir)).metrics;
		},
		async workflow() {
			return normalizeWorkflow((await loadState(dir)).workflow);
		},
		async recordRecovery(action, returnedEvidence) {
			// A session with no directory has nothing archived: recording there would create it (a
			// mistyped session name must create nothing).
			if (!(await isDirectory(dir))) return;
			await updateState(dir, (state) => {
				const recovery = state.metrics.recovery;
				recovery.calls[action] = (recovery.calls[action] ?? 0) + 1;
				if (!EVIDENCE_ACTIONS.has(action)) return;
				if (returnedEvidence) recovery.withEvidence++;
				else recovery.empty++;
			});
		},
	};
}
