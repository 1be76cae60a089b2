import type { SessionEntry } from "../session/index.js";
import { IPYTHON_STATE_TYPE } from "./kernel-state.js";
import { estimateEntryTokens } from "./tokens.js";

/** Where a compaction cuts the branch. */
export interface CutPoint {
	/** Index of the first entry kept verbatim. */
	firstKeptIndex: number;
	/**
	 * When the cut lands inside a turn (on an assistant message): index of the user message that
	 * started that turn, whose prefix up to the cut is summarised apart. Otherwise -1.
	 */
	turnStartIndex: number;
}

/**
 * An entry the kept part may start with. Never a tool result: its tool call would be cut away
 * (an orphaned result is rejected by providers). Entries the model never sees are not cut points.
 */
export function isValidCutPoint(entry: SessionEntry): boolean {
	if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
	if (entry.type !== "message") return false;
	const role = entry.message.role;
	return role === "user" || role === "assistant" || role === "host";
}

/**
 * An entry that starts a turn. Not the `<ipython_state>` note a compaction appends: it lands in the
 * middle of the turn that was running, and taken for a turn's start it would split every later
 * compaction into a second summary call that never sees the previous summary.
 */
function isTurnStart(entry: SessionEntry): boolean {
	if (entry.type === "custom_message") return entry.customType !== IPYTHON_STATE_TYPE;
	if (entry.type === "branch_summary") return true;
	return entry.type === "message" && (entry.message.role === "user" || entry.message.role === "host");
}

/**
 * Walk `entries[start, end)` from newest to oldest summing estimated tokens; once the sum meets
 * or exceeds `keepRecentTokens`, cut at the first valid cut point at or after that index (or, when
 * there is none after it, the nearest one before it, so the large entry is kept whole). Entries
 * are never split. If the sum never reaches the threshold, everything is kept (`firstKeptIndex` = start).
 */
export function findCutPoint(
	entries: readonly SessionEntry[],
	start: number,
	end: number,
	keepRecentTokens: number,
): CutPoint {
	let accumulated = 0;
	let reached = -1;
	for (let index = end - 1; index >= start; index--) {
		accumulated += estimateEntryTokens(entries[index] as SessionEntry);
		if (accumulated >= keepRecentTokens) {
			reached = index;
			break;
		}
	}
	if (reached < 0) return { firstKeptIndex: start, turnStartIndex: -1 };
	let cut = -1;
	for (let index = reached; index < end; index++) {
		if (isValidCutPoint(entries[index] as SessionEntry)) {
			cut = index;
			break;
		}
	}
	if (cut < 0) {
		for (let index = reached - 1; index >= start; index--) {
			if (isValidCutPoint(entries[index] as SessionEntry)) {
				cut = index;
				break;
			}
		}
	}
	if (cut < 0) return { firstKeptIndex: start, turnStartIndex: -1 };
	let turnStartIndex = -1;
	if (!isTurnStart(entries[cut] as SessionEntry)) {
		for (let index = cut - 1; index >= start; index--) {
			if (isTurnStart(entries[index] as SessionEntry)) {
				turnStartIndex = index;
				break;
			}
		}
	}
	return { firstKeptIndex: cut, turnStartIndex };
}
