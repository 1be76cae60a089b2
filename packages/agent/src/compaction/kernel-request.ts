import type { CompactionReason } from "../extensions/index.js";

/** The host request `await compact.run(instructions)` sends from the kernel. */
export const COMPACT_REQUEST_TYPE = "compact";

/** What the kernel's request needs from the session. */
export interface CompactionRequester {
	requestCompaction(customInstructions?: string, reason?: CompactionReason): void;
}

/**
 * Handler for the kernel's `compact` request. It only marks the compaction: the cell that asked
 * is still running, so the compaction runs at the next turn boundary (before the next model call).
 */
export function compactRequestHandler(session: CompactionRequester): (payload: Record<string, unknown>) => {
	message: string;
} {
	return (payload) => {
		const instructions =
			typeof payload.instructions === "string" && payload.instructions.trim() ? payload.instructions : undefined;
		session.requestCompaction(instructions, "kernel");
		return {
			message:
				"Compaction requested: it runs before the next model call. The kernel keeps every variable; finish this cell normally.",
		};
	};
}
