import { MASKING, PEER_ARMS } from "./peers.js";
import type { Arm } from "./types.js";

export * from "./peers.js";
export {
	type FactSearch,
	locationQuery,
	PrimeContextArm,
	type PrimeContextDeps,
	type RecoveryCheck,
} from "./prime-context.js";
export type { AgeingRun, ArchivedView, Arm, ArmRun, Observation } from "./types.js";

const RULES: Record<string, string> = {
	raw: "the output as is",
	codex: "Codex CLI: first 128 + last 128 lines within 10 KiB (head/tail halves)",
	"claude-code": "Claude Code: over 30,000 chars, a 2,000-char preview",
	pi: "pi: last 2,000 lines or 50 KB, whichever is smaller",
	rlm: "RLM reference REPL: first 20,000 chars",
	"context-mode": "context-mode: first 60% + last 40% of lines within 100 KB",
};

/** The peer arms (plain functions), then last-5 masking for trajectory replay. */
export function peerArms(): Arm[] {
	const arms: Arm[] = PEER_ARMS.map(({ name, view }) => ({
		name,
		rule: RULES[name],
		open: async () => ({ view: async (observation) => view(observation.text) }),
	}));
	arms.push({
		name: "last-5-masking",
		rule: "SWE-agent/OpenHands style: observations older than the last 5 become a one-line stub",
		mask: { keep: MASKING.keepLast, every: 1 },
		trajectoriesOnly: true,
		open: async () => ({ view: async (observation) => observation.text }),
	});
	arms.push({
		name: "block-masking",
		rule: `observations older than the last ${MASKING.keepLast} become a one-line stub, the masked boundary moving only every ${MASKING.blockEvery} observations (cache-friendly masking)`,
		mask: { keep: MASKING.keepLast, every: MASKING.blockEvery },
		trajectoriesOnly: true,
		open: async () => ({ view: async (observation) => observation.text }),
	});
	return arms;
}
