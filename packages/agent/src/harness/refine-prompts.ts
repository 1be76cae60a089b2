import { HARNESS_LIMITS } from "./types.js";

/** The review call of the automatic path: is anything in the trajectory worth keeping? */
export const REVIEW_SYSTEM_PROMPT = `You review an AI coding agent's recent trajectory for its continual harness: the persisted prompt notes, memories, procedures and sub-agent specs that later sessions start with.
Decide whether the trajectory holds anything worth keeping: a fact about this project or user that was verified, a procedure that worked and will recur, a mistake with its proven fix, a preference the user stated.
Reject one-off noise (details of this task only, transient errors, chatter) and unproven guesses (anything not confirmed by a result in the trajectory). Most trajectories hold nothing worth keeping; then answer with an empty reply.
Otherwise answer with a short list, one line each: what to keep and the evidence for it. Entries listed as unused candidates for retirement may be proposed for deletion ("retire: kind/name: why").`;

/** The planning call: the edits, as a JSON list, nothing else. */
export const PLANNING_SYSTEM_PROMPT = `You maintain an AI coding agent's continual harness: persisted entries that later sessions see as an index after their system prompt and read in full on demand.
Kinds: "prompt_note" (a standing instruction or convention), "memory" (a verified fact about the project, user or environment), "procedure" (steps that worked, in order, with the commands), "subagent" (a role description a sub-agent is started with).
Answer with a JSON list of edits and nothing else (no prose, no code fence). Each edit is one of:
{"op": "create", "kind": "memory", "name": "short-name", "text": "...", "scope": "local" or "global", "reason": "..."}
{"op": "update", "kind": "procedure", "name": "existing-name", "text": "the complete new text", "reason": "..."}
{"op": "delete", "kind": "memory", "name": "existing-name", "reason": "..."}
Names: letters, digits, ".", "_", "-", at most ${HARNESS_LIMITS.nameChars} characters. "local" keeps an entry in this session only; "global" shares it with every later session (use it for what holds beyond this task). Keep each text short and self-contained; the index shows its first ${HARNESS_LIMITS.indexChars} characters, so start with what it is for.
Keep only what the trajectory proves and what will help again; update or delete an entry rather than adding a near-duplicate; delete entries proposed for retirement unless they still earn their place. The base system prompt is not part of the harness and cannot be edited. When nothing is worth changing, answer [].`;

export function reviewRequest(trajectory: string, retirement: string): string {
	return [
		`<trajectory chars="${trajectory.length}">\n${trajectory}\n</trajectory>`,
		retirement ? `<retirement-candidates>\n${retirement}\n</retirement-candidates>` : "",
		"Is anything here worth keeping in the harness? Answer with the short list, or with an empty reply.",
	]
		.filter(Boolean)
		.join("\n\n");
}

export function planningRequest(parts: {
	trajectory: string;
	overview: string;
	refinements: string;
	retirement: string;
	instructions?: string;
	review?: string;
}): string {
	return [
		parts.instructions ? `<instructions-from-the-user>\n${parts.instructions}\n</instructions-from-the-user>` : "",
		parts.review ? `<review>\n${parts.review}\n</review>` : "",
		`<harness-overview>\n${parts.overview}\n</harness-overview>`,
		parts.retirement ? `<retirement-candidates>\n${parts.retirement}\n</retirement-candidates>` : "",
		`<recent-refinements>\n${parts.refinements || "(none yet)"}\n</recent-refinements>`,
		`<trajectory chars="${parts.trajectory.length}">\n${parts.trajectory}\n</trajectory>`,
		"Answer with the JSON list of edits.",
	]
		.filter(Boolean)
		.join("\n\n");
}
