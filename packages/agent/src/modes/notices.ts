import type { SessionNotice } from "../orchestrator/index.js";
import { endSentence } from "../sentence.js";

/**
 * One line for the user about a compaction or an extension problem. None for the end of a
 * `/compact` the user typed: the command's own answer says how it ended (said twice otherwise).
 */
export function describeNotice(notice: SessionNotice): string | undefined {
	if ((notice.type === "compaction_end" || notice.type === "compaction_failed") && notice.reason === "command")
		return undefined;
	switch (notice.type) {
		case "compaction_start":
			return notice.reason === "overflow"
				? "The conversation no longer fits the context window: compacting, then retrying once…"
				: "Compacting the older conversation (the kernel keeps its state)…";
		case "compaction_end":
			if (notice.result.status !== "compacted") return notice.result.message;
			return `Compacted: the older conversation (${notice.result.entry.tokensBefore.toLocaleString("en-US")} tokens in context) is now a summary; recent messages and every kernel variable are kept.`;
		case "compaction_failed":
			return `Compaction failed: ${endSentence(notice.message)} The conversation is unchanged; retry with /compact, or start a new session if the context is full.`;
		case "extension_problem":
			return notice.phase === "warning"
				? `Extension ${notice.path}: ${notice.message}`
				: `Extension ${notice.path} failed in ${notice.phase}: ${endSentence(notice.message)} The session goes on without that step; fix or remove the extension.`;
	}
}
