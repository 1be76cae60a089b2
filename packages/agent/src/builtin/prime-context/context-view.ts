import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { renderTask, type TaskSnapshot } from "prime-agent-context";
import type { HostMessage, SessionEntry } from "../../extensions/api.js";

export const TASK_MESSAGE_TYPE = "prime_context_task";
/** Host messages that describe the kernel's state; only the newest one is sent. */
export const KERNEL_NOTICE_TYPES = new Set(["ipython_state", "kernel_fresh"]);
/** A restored user request is an exact copy up to this many characters, then marked as cut. */
export const RESTORED_TEXT_MAX = 4000;
/** An inventory of more names than this is replaced by the count and a lookup hint. */
export const INVENTORY_MAX_NAMES = 20;

/**
 * Builds the `<prime_context_task>` text for one provider call, or null when it would add nothing
 * the model does not already see: the root request and the newest user instruction are restored
 * only when compaction has hidden them; focus, open items and pins whenever they are set.
 */
export function taskText(
	snapshot: TaskSnapshot,
	branch: readonly SessionEntry[],
	messages: readonly AgentMessage[],
): string | null {
	const prompts = branch.flatMap((entry) =>
		entry.type === "message" && entry.message.role === "user" ? [textOf(entry.message)] : [],
	);
	const visible = new Set(messages.flatMap((message) => (message.role === "user" ? [textOf(message)] : [])));
	const root = prompts[0];
	const rootHidden = root !== undefined && root !== "" && !visible.has(root);
	const newest = prompts.length > 1 ? prompts[prompts.length - 1] : undefined;
	const newestHidden = newest !== undefined && newest !== "" && !visible.has(newest);
	const text = renderTask(snapshot, { rootRequest: rootHidden ? bounded(root) : null });
	if (!newestHidden) return text;
	const section = `LATEST_USER_INSTRUCTION\n${JSON.stringify(bounded(newest)).replaceAll("</", "<\\/")}`;
	if (text === null) return `<prime_context_task>\n${section}\n</prime_context_task>`;
	return text.replace(/\n<\/prime_context_task>$/, `\n\n${section}\n</prime_context_task>`);
}

/** The hidden message carrying `text`; no timestamp that changes, so equal text gives equal bytes. */
export function taskMessage(text: string): HostMessage {
	return { role: "host", customType: TASK_MESSAGE_TYPE, content: text, display: false, timestamp: 0 };
}

/**
 * Keeps only the newest kernel-state notice and shortens its long name inventory to a count and a
 * `globals()` hint (the names stay defined in the kernel). Returns `messages` itself when nothing
 * changes, so the caller can tell.
 */
export function trimKernelNotices(messages: AgentMessage[]): AgentMessage[] {
	let newest = -1;
	let count = 0;
	messages.forEach((message, index) => {
		if (isKernelNotice(message)) {
			newest = index;
			count++;
		}
	});
	if (newest < 0) return messages;
	const notice = messages[newest] as HostMessage;
	const shortened = shortenInventory(typeof notice.content === "string" ? notice.content : "");
	if (count === 1 && shortened === null) return messages;
	const out: AgentMessage[] = [];
	messages.forEach((message, index) => {
		if (index === newest) out.push(shortened === null ? message : { ...notice, content: shortened });
		else if (!isKernelNotice(message)) out.push(message);
	});
	return out;
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
	const content = (message as { content?: unknown }).content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((part) => (part?.type === "text" ? String(part.text) : "")).join("");
}
