/**
 * Reader for our own agent's session files (JSONL): a `{type: "session", ...}` header line, then
 * entries `{type, id, parentId, timestamp, ...}` forming a tree. The replayed branch is the one
 * ending at the last entry written. Its `message` entries carry the conversation: user messages,
 * assistant messages (text and `toolCall` parts) and `toolResult` messages, the observations.
 *
 * A session stores what its model was shown: record with Prime Context off to replay raw outputs.
 */
import type { Trajectory, TrajectoryStep } from "./trajectory.js";

interface Part {
	type?: string;
	text?: string;
	name?: string;
	arguments?: Record<string, unknown>;
}

interface Entry {
	type?: string;
	id?: string;
	parentId?: string | null;
	message?: { role?: string; content?: string | Part[]; isError?: boolean; toolName?: string };
	content?: string | Part[];
}

const textOf = (content: string | Part[] | undefined): string =>
	typeof content === "string"
		? content
		: (content ?? [])
				.filter((part) => part?.type === "text")
				.map((part) => part.text ?? "")
				.join("");

/** The command of a tool call: the cell's code for the ipython tool, else its arguments as JSON. */
function commandOf(part: Part): string {
	const code = part.arguments?.code;
	return typeof code === "string" ? code : JSON.stringify(part.arguments ?? {});
}

/** Parses one session file's text; `fallbackId` names it when the header has no id. */
export function parseSession(jsonl: string, fallbackId: string): Trajectory {
	const entries: Entry[] = [];
	let id = fallbackId;
	for (const [index, line] of jsonl.split("\n").entries()) {
		if (line.trim() === "") continue;
		let entry: Entry & { type?: string };
		try {
			entry = JSON.parse(line);
		} catch (error) {
			throw new Error(`Session ${fallbackId}, line ${index + 1}: not JSON (${(error as Error).message}).`);
		}
		if (entry.type === "session") id = String((entry as { id?: string }).id ?? fallbackId);
		else entries.push(entry);
	}
	const byId = new Map(entries.map((entry) => [entry.id, entry]));
	const branch: Entry[] = [];
	for (let entry = entries.at(-1); entry; entry = entry.parentId ? byId.get(entry.parentId) : undefined) {
		branch.unshift(entry);
		if (branch.length > entries.length) throw new Error(`Session ${fallbackId} has a cycle in its entry tree.`);
	}

	let task: string | null = null;
	const steps: TrajectoryStep[] = [];
	// Messages since the last observation (assistant turns, later user or host messages).
	let pending: string[] = [];
	let calls: Part[] = [];
	for (const entry of branch) {
		const message = entry.message;
		if (entry.type === "custom_message") {
			pending.push(textOf(entry.content));
			continue;
		}
		if (entry.type !== "message" || !message) continue;
		if (message.role === "user") {
			if (task === null) task = textOf(message.content);
			else pending.push(textOf(message.content));
		} else if (message.role === "assistant") {
			const parts = Array.isArray(message.content) ? message.content : [];
			calls = parts.filter((part) => part?.type === "toolCall");
			pending.push(
				[textOf(message.content), ...calls.map((call) => `${call.name ?? "tool"}: ${commandOf(call)}`)].join("\n"),
			);
		} else if (message.role === "toolResult") {
			const call = calls.shift();
			steps.push({
				assistant: pending.join("\n"),
				command: call ? commandOf(call) : null,
				observation: textOf(message.content),
				exitCode: null,
				isError: message.isError === true,
				tool: message.toolName ?? call?.name ?? "tool",
			});
			pending = [];
		}
	}
	return { id, system: "", task: task ?? "", steps, trailing: pending.length > 0 ? [pending.join("\n")] : [] };
}
