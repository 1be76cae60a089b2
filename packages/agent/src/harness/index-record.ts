import { createHash } from "node:crypto";
import type { SessionEntry } from "../session/index.js";

/**
 * The custom session entry that records how the harness index was ranked: appended when the index
 * is first ranked in a session and whenever a harness change ranks it again (while a kind holds two
 * entries or more; with fewer there is no order to keep), so a resumed session (`-c`, `--resume`, a
 * fork) shows the index exactly as before until the harness changes.
 */
export const HARNESS_INDEX_ENTRY = "harness_index";

/** A ranking key longer than this is not one the agent wrote (it is recomputed instead). */
const RANKED_FOR_MAX = 1_000_000;

/**
 * The data of a `harness_index` entry. `rankedFor` is what the entries were ranked against (the
 * task's words, see `rankingKey`); `sha256` is the hash of the section it gave. The section itself
 * is not stored: it is always rendered from the stores, so a session file can reorder the harness's
 * own entries at most, never put text of its own into the system prompt.
 */
export interface HarnessIndexRecord {
	rankedFor: string;
	sha256: string;
}

/** What the newest `harness_index` entry of a branch holds: a record, a problem, or neither. */
export type RecordedIndex =
	| { record: HarnessIndexRecord; problem?: undefined }
	| { record?: undefined; problem: string }
	| { record?: undefined; problem?: undefined };

/** The newest `harness_index` entry on `branch`, checked: a session file is untrusted. */
export function recordedIndex(branch: readonly SessionEntry[]): RecordedIndex {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index] as SessionEntry;
		if (entry.type !== "custom" || entry.customType !== HARNESS_INDEX_ENTRY) continue;
		const wrong = recordProblem(entry.data);
		if (wrong === undefined) return { record: entry.data as HarnessIndexRecord };
		return {
			problem: `The harness index recorded in this session (entry ${entry.id}) cannot be used: ${wrong}. It is ranked again for the next prompt, so the system prompt may differ from the one before; nothing else is affected.`,
		};
	}
	return {};
}

function recordProblem(data: unknown): string | undefined {
	if (typeof data !== "object" || data === null || Array.isArray(data)) return "its data is not an object";
	const { rankedFor, sha256 } = data as Record<string, unknown>;
	if (typeof rankedFor !== "string") return "rankedFor is not a string";
	if (rankedFor.length > RANKED_FOR_MAX) return `rankedFor is longer than ${RANKED_FOR_MAX} characters`;
	if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) return "sha256 is not a SHA-256 hex digest";
	return undefined;
}

/** The record of a section ranked for `rankedFor`. */
export function indexRecord(rankedFor: string, text: string): HarnessIndexRecord {
	return { rankedFor, sha256: sectionHash(text) };
}

export function sectionHash(text: string): string {
	return createHash("sha256").update(text).digest("hex");
}
