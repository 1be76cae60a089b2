import type { BeforeToolCallContext, BeforeToolCallResult } from "@mariozechner/pi-agent-core";

/** What the model reads in place of the result of a call it was cut off writing. */
export const CUT_OFF_CALL_REASON =
	"Not run: your answer reached the model's output token limit while writing this call, so its arguments may be cut short (code that ran only in part would be worse than none). Send the call again; split long code over several cells.";

/**
 * Refuses the call an answer ended in when the answer hit the output token limit (`length`): the
 * provider parses whatever arguments had arrived, and a cell cut at a line end would run half a
 * script and report success. Calls before it in the same answer were complete when the next began.
 */
export function refuseCutOffCall({
	assistantMessage,
	toolCall,
}: BeforeToolCallContext): BeforeToolCallResult | undefined {
	if (assistantMessage.stopReason !== "length") return undefined;
	const last = assistantMessage.content.at(-1);
	return last?.type === "toolCall" && last.id === toolCall.id
		? { block: true, reason: CUT_OFF_CALL_REASON }
		: undefined;
}
