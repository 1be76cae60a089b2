/**
 * The observation broker: decides once per final tool result whether the model sees it as it is,
 * as a structured capsule, or as a delta; archives every observation's exact bytes first.
 */
import type { ArchiveWriter, SessionArchive } from "../archive/types.js";
import { capsuleBudgets } from "../capsule/index.js";
import type { BrokerMetrics, ContextConfig, ObservationBroker, ObservationInput, ObservationResult } from "../types.js";
import { decide, type EarlierBodies, type Verdict } from "./decide.js";
import { type Scan, scanObservation } from "./scan.js";
import { BODY_MAX_BYTES, openObservationSource, streamsEqual, visibleTextSource } from "./source.js";
import {
	addRecent,
	type BrokerState,
	loadState,
	RECENT_TEXT_MAX_BYTES,
	type RecentObservation,
	saveState,
	withStateLock,
} from "./state.js";

export { TextCheck } from "../archive/text-check.js";
export { decide, RULES, type Verdict } from "./decide.js";
export { type Scan, scanObservation } from "./scan.js";
export { LineSplitter, openObservationSource, streamsEqual, visibleTextSource } from "./source.js";
export { type BrokerState, loadState, type RecentObservation, STATE_FILE, saveState } from "./state.js";

export interface BrokerOptions {
	archive: SessionArchive;
	config: ContextConfig;
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
): EarlierBodies {
	const body = async (earlierId: string, bytes: number) => {
		if (bytes > BODY_MAX_BYTES) return null;
		try {
			return await archive.readBytes(earlierId);
		} catch {
			return null;
		}
	};
	/** Exact comparison with one earlier observation of the same size: in memory when small, streamed when large. */
	const equals: EarlierBodies["equals"] = async (earlier) => {
		try {
			if (scan.body !== null) {
				const other = earlier.text !== null ? Buffer.from(earlier.text, "utf8") : await body(earlier.id, earlier.bytes);
				return other?.equals(scan.body) === true;
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
		equals,
	};
}

function remember(state: BrokerState, id: string, input: ObservationInput, scan: Scan, verdict: Verdict): void {
	const keepText = scan.body !== null && !scan.binary && scan.bytes <= RECENT_TEXT_MAX_BYTES;
	const entry: RecentObservation = {
		id,
		tool: input.tool,
		bytes: scan.bytes,
		lines: scan.lines,
		binary: scan.binary,
		text: keepText && scan.body ? scan.body.toString("utf8") : null,
		signature: verdict.signature,
		headline: verdict.headline,
		counts: scan.outcome.counts,
	};
	addRecent(state, entry);
	if (verdict.consumedGrace) state.graceUsed++;
}

function count(metrics: BrokerMetrics, result: ObservationResult, input: ObservationInput): void {
	metrics.decisions[result.decision]++;
	metrics.visibleBytesSaved += Math.max(0, Buffer.byteLength(input.text) - Buffer.byteLength(result.text));
}

/**
 * Creates the broker of one session. Its state (grace count, recent observations, metrics) lives
 * in the session directory (`archive.dir`) and is re-read under a lock for every observation, so
 * separate processes on one session behave as one broker.
 */
export async function createBroker(options: BrokerOptions): Promise<ObservationBroker> {
	const { archive, config } = options;
	const dir = archive.dir;

	async function observeUnlocked(input: ObservationInput): Promise<ObservationResult> {
		const state = await loadState(dir);
		let writer: ArchiveWriter | null = null;
		let archiveError: string | undefined;
		try {
			writer = await archive.create();
		} catch (error) {
			archiveError = describe(error);
		}
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

		const fallback = async (reason: string): Promise<ObservationResult> => {
			await writer?.abort().catch(() => {});
			const result: ObservationResult = {
				id: "",
				decision: "pass-through",
				text: input.text,
				source: scan.source,
				bytes: scan.bytes,
				lines: scan.lines,
				archived: false,
				archiveError: `observation not archived (${reason}); the original output is shown instead. Check that the Prime Context storage directory is writable and has free space.`,
			};
			count(state.metrics, result, input);
			await saveState(dir, state).catch(() => {});
			return result;
		};
		if (!writer || archiveError !== undefined) return fallback(archiveError ?? "archive unavailable");

		const verdict = config.enabled
			? await decide({
					id: writer.id,
					input,
					scan,
					budgets: capsuleBudgets(config, input.contextUsage),
					graceUsed: state.graceUsed,
					earlier: earlierBodies(archive, state, scan, input),
				})
			: {
					decision: "pass-through" as const,
					text: input.text,
					reason: "disabled",
					consumedGrace: false,
					signature: null,
					headline: null,
				};
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
		const result: ObservationResult = {
			id: writer.id,
			decision: verdict.decision,
			text: verdict.text,
			source: scan.source,
			bytes: scan.bytes,
			lines: scan.lines,
			archived: true,
		};
		remember(state, writer.id, input, scan, verdict);
		count(state.metrics, result, input);
		await saveState(dir, state).catch(() => {});
		return result;
	}

	return {
		observe: (input) => withStateLock(dir, () => observeUnlocked(input)),
		async metrics() {
			return (await loadState(dir)).metrics;
		},
		async recordRecovery(action, returnedEvidence) {
			await withStateLock(dir, async () => {
				const state = await loadState(dir);
				const recovery = state.metrics.recovery;
				recovery.calls[action] = (recovery.calls[action] ?? 0) + 1;
				if (returnedEvidence) recovery.withEvidence++;
				else recovery.empty++;
				// Metrics are diagnostics: an unwritable session directory must not fail the recovery itself.
				await saveState(dir, state).catch(() => {});
			});
		},
	};
}
