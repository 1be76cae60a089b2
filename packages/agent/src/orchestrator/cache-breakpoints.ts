/**
 * Anthropic caches a prompt only up to a block marked `cache_control`, and a later request reads
 * that cache only if it repeats the marked prefix. pi-ai marks the system prompt, the last tool and
 * the last message. When the last message is one the host appends at the end of every request and
 * drops from the next (Prime Context's task snapshot), the only conversation mark sits on a prefix
 * no later request repeats: every request re-writes the whole conversation at 1.25x instead of
 * reading it at 0.1x. Marking the message before the last as well writes the cache at the end of
 * the history, which the next request repeats; without such a message it is the fallback the
 * provider reads when the newest mark misses.
 */

/** Anthropic refuses a request with more marks than this. */
const MAX_BREAKPOINTS = 4;
/** Block types that can carry a mark (never thinking blocks). */
const MARKABLE = new Set(["text", "image", "document", "tool_use", "tool_result"]);

type Block = { type?: unknown; cache_control?: unknown };
type WireMessage = { role?: unknown; content?: unknown };

/**
 * Adds the mark of `payload`'s last message to its second-to-last message (an Anthropic messages
 * request as pi-ai builds it), when the last carries one and the limit leaves room. Changes the
 * payload in place; anything else passes untouched.
 */
export function markSecondToLastMessage(payload: unknown): void {
	const messages = (payload as { messages?: unknown } | null)?.messages;
	if (!Array.isArray(messages) || messages.length < 2) return;
	const mark = lastBlockOf(messages[messages.length - 1] as WireMessage)?.cache_control;
	if (mark === undefined || countMarks(payload) >= MAX_BREAKPOINTS) return;
	const previous = messages[messages.length - 2] as WireMessage;
	// A string is one text block: as pi-ai itself sends a marked last message.
	if (typeof previous.content === "string") previous.content = [{ type: "text", text: previous.content }];
	if (!Array.isArray(previous.content)) return;
	const target = (previous.content as Block[]).findLast((block) => MARKABLE.has(block.type as string));
	if (target && target.cache_control === undefined) target.cache_control = mark;
}

function lastBlockOf(message: WireMessage | undefined): Block | undefined {
	return Array.isArray(message?.content) ? (message.content.at(-1) as Block | undefined) : undefined;
}

function countMarks(value: unknown): number {
	if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countMarks(item), 0);
	if (value === null || typeof value !== "object") return 0;
	let count = "cache_control" in value ? 1 : 0;
	for (const [key, inner] of Object.entries(value)) if (key !== "cache_control") count += countMarks(inner);
	return count;
}
