import type { AssistantMessage, ToolCall, ToolResultMessage } from "@mariozechner/pi-ai";
import type { Session, SessionEntry } from "../session/index.js";
import { IPYTHON_TOOL_NAME, type IpythonDetails } from "../tools/index.js";
import { type RunningCall, readRunningCall } from "./record.js";

const STOPPED = "the agent process running this session stopped (it crashed or was killed)";
const NEW_KERNEL = "The next cell runs in a new kernel.";

/**
 * What the model reads for the call that was running when the session's process stopped: the
 * output it printed until then, then what happened. `output` is the call's recorded output.
 */
export function cutOffCallText(toolName: string, output: string): string {
	const cell = toolName === IPYTHON_TOOL_NAME;
	const printed = output.replace(/\s+$/, "");
	const kept =
		printed === ""
			? "It had printed nothing until then; its result is lost."
			: "The output above is what it printed until then; the rest, and its result, are lost.";
	const said = `[the ${cell ? "cell" : "call"} did not finish: ${STOPPED} while it ran${cell ? ", and its kernel stopped with it" : ""}. ${kept}${cell ? ` ${NEW_KERNEL}` : ""}]`;
	return printed === "" ? said : `${printed}\n${said}`;
}

/** What the model reads for a call with no result and no record of it running (it may never have run). */
export function unrecordedCallText(toolName: string): string {
	const cell = toolName === IPYTHON_TOOL_NAME;
	return `[no result of this ${cell ? "cell" : "call"} was recorded: ${STOPPED} or could not save it, so whether it ran, and what it printed, is unknown.${cell ? ` ${NEW_KERNEL}` : ""}]`;
}

/** What the model reads for a call of the same answer after the cut-off one (calls run one at a time). */
export function notRunCallText(toolName: string): string {
	const cell = toolName === IPYTHON_TOOL_NAME;
	return `[not run: ${STOPPED} during an earlier ${cell ? "cell" : "call"} of this answer, before this one started.${cell ? ` ${NEW_KERNEL}` : ""}]`;
}

/**
 * Give every call at the end of `session`'s active branch that has no result one, recorded in the
 * session: the process running the session stopped during the call (killed, crashed), so none was
 * written. The model reads that the call was cut off and the output it had printed, kept in
 * `artifactDir` while it ran (see `RunningCallRecord`); without this the provider library would
 * answer the call with a bare "No result provided". Returns how many calls were answered.
 *
 * Only the branch's last answer is looked at, and only while nothing but results (and entries the
 * model never sees) follows it: a conversation that went on past a call is left as it is. An answer
 * that ended in an error or was stopped is never sent again, so its calls need no result.
 */
export function answerUnfinishedCalls(session: Session, artifactDir: string): number {
	const answer = lastAnswer(session.branch());
	if (!answer) return 0;
	const unanswered = answer.calls.filter((call) => !answer.answered.has(call.id));
	if (unanswered.length === 0) return 0;
	const recorded = readRunningCall(artifactDir);
	const running = recorded && unanswered.some((call) => call.id === recorded.toolCallId) ? recorded : undefined;
	let after = false;
	for (const call of unanswered) {
		const text =
			call.id === running?.toolCallId
				? cutOffCallText(call.name, running.output)
				: after
					? notRunCallText(call.name)
					: unrecordedCallText(call.name);
		session.appendMessage(resultFor(call, text, call.id === running?.toolCallId ? running : undefined));
		after ||= call.id === running?.toolCallId;
	}
	return unanswered.length;
}

/** The branch's last assistant message with its calls, and the ids of the results after it; undefined when the conversation went on. */
function lastAnswer(branch: readonly SessionEntry[]): { calls: ToolCall[]; answered: Set<string> } | undefined {
	const answered = new Set<string>();
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index] as SessionEntry;
		if (entry.type === "custom" || entry.type === "model_change" || entry.type === "thinking_level_change") continue;
		if (entry.type !== "message") return undefined;
		const message = entry.message;
		if (message.role === "toolResult") {
			answered.add(message.toolCallId);
			continue;
		}
		if (message.role !== "assistant") return undefined;
		const assistant = message as AssistantMessage;
		if (assistant.stopReason === "error" || assistant.stopReason === "aborted") return undefined;
		const calls = assistant.content.filter((part): part is ToolCall => part.type === "toolCall");
		return { calls, answered };
	}
	return undefined;
}

function resultFor(call: ToolCall, text: string, running: RunningCall | undefined): ToolResultMessage {
	const durationMs = running ? running.updatedAt - running.startedAt : 0;
	const details: IpythonDetails | { cutOff: true } =
		call.name === IPYTHON_TOOL_NAME
			? {
					status: "died",
					isError: true,
					stdout: running?.output ?? "",
					stderr: "",
					durationMs,
					diffs: [],
					writtenFiles: [],
					cutOff: true,
				}
			: { cutOff: true };
	return {
		role: "toolResult",
		toolCallId: call.id,
		toolName: call.name,
		content: [{ type: "text", text }],
		details,
		isError: true,
		timestamp: Date.now(),
	};
}
