import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { renderTask, type TaskSnapshot } from "prime-agent-context";
import type { HostMessage, SessionEntry } from "../../extensions/api.js";

export const TASK_MESSAGE_TYPE = "prime_context_task";
/** Host messages that describe the kernel's state; a long name inventory in one is sent shortened. */
export const KERNEL_NOTICE_TYPES = new Set(["ipython_state", "kernel_fresh"]);
/** A restored user request is an exact copy up to this many characters, then marked as cut. */
export const RESTORED_TEXT_MAX = 4000;
/** An inventory of more names than this is replaced by the count and a lookup hint. */
export const INVENTORY_MAX_NAMES = 20;
/** The goal continuation prompt (a hidden host message only goals emit). */
export const GOAL_CONTEXT_TYPE = "goal_context";
/** What a goal continuation's poll result is sent as when it is the previous continuation's again. */
export const SAME_POLL_RESULT = "[Unchanged: the previous continuation's result again, ids and times aside.]";

/**
 * Builds the `<prime_context_task>` text for one provider call, or null when it would add nothing
 * the model does not already see: the root request and the newest user instruction are restored
 * only when compaction has hidden them; focus, open items and pins whenever they are set; the
 * `workflow` section (state and guard of a staged goal) whenever it is given.
 */
export function taskText(
	snapshot: TaskSnapshot,
	branch: readonly SessionEntry[],
	messages: readonly AgentMessage[],
	workflow: string | null = null,
): string | null {
	const prompts = branch.flatMap((entry) =>
		entry.type === "message" && entry.message.role === "user" ? [textOf(entry.message)] : [],
	);
	const visible = new Set(messages.flatMap((message) => (message.role === "user" ? [textOf(message)] : [])));
	const root = prompts[0];
	const rootHidden = root !== undefined && root !== "" && !visible.has(root);
	const newest = prompts.length > 1 ? prompts[prompts.length - 1] : undefined;
	const newestHidden = newest !== undefined && newest !== "" && !visible.has(newest);
	let text = renderTask(snapshot, { rootRequest: rootHidden ? bounded(root) : null });
	if (newestHidden) {
		text = withSection(text, `LATEST_USER_INSTRUCTION\n${JSON.stringify(bounded(newest)).replaceAll("</", "<\\/")}`);
	}
	// During staged work under an active goal: the compact workflow state and its one guard.
	return workflow === null ? text : withSection(text, workflow);
}

/** `text` with one more section before its closing tag (a new message when there is none). */
function withSection(text: string | null, section: string): string {
	if (text === null) return `<prime_context_task>\n${section}\n</prime_context_task>`;
	return text.replace(/\n<\/prime_context_task>$/, `\n\n${section}\n</prime_context_task>`);
}

/** The hidden message carrying `text`; no timestamp that changes, so equal text gives equal bytes. */
export function taskMessage(text: string): HostMessage {
	return { role: "host", customType: TASK_MESSAGE_TYPE, content: text, display: false, timestamp: 0 };
}

/**
 * Shortens each kernel-state notice's long name inventory to a count and a `globals()` hint (the
 * names stay defined in the kernel). Each notice is shortened on its own text alone and none is
 * dropped, so a notice reads the same bytes on every later call (the provider's cached prefix).
 * Returns `messages` itself when nothing changes, so the caller can tell.
 */
export function shortenKernelNotices(messages: AgentMessage[]): AgentMessage[] {
	let changed = false;
	const out = messages.map((message) => {
		if (!isKernelNotice(message)) return message;
		const shortened = shortenInventory((message as HostMessage).content as string);
		if (shortened === null) return message;
		changed = true;
		return { ...(message as HostMessage), content: shortened };
	});
	return changed ? out : messages;
}

function isKernelNotice(message: AgentMessage): boolean {
	return message.role === "host" && KERNEL_NOTICE_TYPES.has(message.customType) && typeof message.content === "string";
}

const HINT = "look one up with `globals().get('name')` or list them with `sorted(globals())`";

/** The notice with its inventory line replaced, or null when it lists few names. */
function shortenInventory(text: string): string | null {
	// `<ipython_state>`: the names are one line of `name (type)` entries, maybe ending `and N more (...)`.
	const lines = text.split("\n");
	const at = lines.findIndex((line) => /^\S+ \([^)]*\)(, \S+ \([^)]*\))*(, and [\d,]+ more.*)?$/.test(line));
	if (at >= 0) {
		const line = lines[at] as string;
		const listed = line.split(", and ")[0]?.match(/\S+ \([^)]*\)/g)?.length ?? 0;
		const more = Number(/and ([\d,]+) more/.exec(line)?.[1]?.replaceAll(",", "") ?? 0);
		const total = listed + more;
		if (total <= INVENTORY_MAX_NAMES) return null;
		lines[at] = `${total} names are defined; ${HINT}.`;
		return lines.join("\n");
	}
	// The resume note: `... before your first cell runs: a, b, c. The first cell's ...`.
	const resume = /(before your first cell runs: )([^\]]*?)(\. The first cell)/.exec(text);
	if (resume) {
		const names = (resume[2] as string).split(", ").filter(Boolean);
		if (names.length <= INVENTORY_MAX_NAMES) return null;
		return text.replace(resume[0], `${resume[1]}${names.length} names (${HINT})${resume[3]}`);
	}
	return null;
}

function bounded(text: string): string {
	if (text.length <= RESTORED_TEXT_MAX) return text;
	return `${text.slice(0, RESTORED_TEXT_MAX)} [... ${text.length - RESTORED_TEXT_MAX} more characters]`;
}

function textOf(message: AgentMessage): string {
	return contentText((message as { content?: unknown }).content);
}

/** The text parts of a message's content, joined. */
export function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((part) => (part?.type === "text" ? String(part.text) : "")).join("");
}

/**
 * Goal continuation coalescing, without rewriting what was sent. A continuation turn is a
 * `goal_context` prompt and the assistant and tool messages that follow it, up to the next message
 * of any other kind. A tool result of a turn that directly follows another continuation turn is sent
 * as `SAME_POLL_RESULT` when the tool result at the same place in that turn came from the same tool
 * with the same normalized text (and it is longer than the marker): twenty identical polls of a
 * long job are sent whole once. How a message is sent depends only on the messages before it, so
 * every message is sent the same way on every later call and after a resume (the provider's cached
 * prefix holds); nothing is dropped, and the transcript keeps every result whole. Returns
 * `messages` itself when nothing changes.
 */
export function coalesceGoalContinuations(messages: AgentMessage[]): AgentMessage[] {
	let previous: { end: number; results: AgentMessage[] } | undefined;
	const same = new Set<number>();
	messages.forEach((message, start) => {
		if (!isGoalContext(message)) return;
		let end = start + 1;
		while (end < messages.length && isTurnPart(messages[end] as AgentMessage)) end++;
		const results: AgentMessage[] = [];
		for (let index = start + 1; index < end; index++) {
			const result = messages[index] as AgentMessage;
			if (result.role !== "toolResult") continue;
			const before = previous?.end === start ? previous.results[results.length] : undefined;
			if (before && samePoll(before, result)) same.add(index);
			results.push(result);
		}
		previous = { end, results };
	});
	if (same.size === 0) return messages;
	return messages.map((message, index) =>
		same.has(index) ? { ...message, content: [{ type: "text", text: SAME_POLL_RESULT }] } : message,
	) as AgentMessage[];
}

function isGoalContext(message: AgentMessage): boolean {
	return message.role === "host" && message.customType === GOAL_CONTEXT_TYPE;
}

function isTurnPart(message: AgentMessage): boolean {
	return message.role === "assistant" || message.role === "toolResult";
}

/**
 * Two tool results of the same tool, text only, equal once their volatile parts are masked, the
 * second longer than the marker that would replace it (a shorter one is sent as it is).
 */
function samePoll(before: AgentMessage, after: AgentMessage): boolean {
	if (before.role !== "toolResult" || after.role !== "toolResult") return false;
	if (before.toolName !== after.toolName || before.isError !== after.isError) return false;
	const textOnly = (message: typeof before) => message.content.every((part) => part.type === "text");
	if (!textOnly(before) || !textOnly(after) || textOf(after).length <= SAME_POLL_RESULT.length) return false;
	return normalizePoll(textOf(before)) === normalizePoll(textOf(after));
}

/** A poll result with its volatile parts replaced: observation ids, UUIDs, timestamps, clock times, elapsed values, capsule sizes. */
export function normalizePoll(text: string): string {
	return (
		text
			.replace(/\bobs_\d+\b/g, "obs_#")
			.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>")
			.replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, "<time>")
			// A clock time stands alone: `path:12:34` (a line and column) is a location, not a time.
			.replace(/(?<![\w:./-])\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?![\w:])/g, "<time>")
			.replace(
				/\b\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b/gi,
				"<elapsed>",
			)
			.replace(/\b(elapsed|duration|uptime|runtime|took|waited)(\s*[=:]?\s*)\d+(?:\.\d+)?/gi, "$1$2<n>")
			.replace(/\b(bytes|lines)="\d+"/g, '$1="#"')
			.replace(/\s+/g, " ")
			.trim()
	);
}
