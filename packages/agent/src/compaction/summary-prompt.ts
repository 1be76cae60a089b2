import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { messageText } from "../session/index.js";
import { resultExcerpt } from "./result-excerpt.js";

/** The six sections every summary has, in this order. */
export const SUMMARY_SECTIONS = [
	"Goal",
	"Constraints & Preferences",
	"Progress",
	"Key Decisions",
	"Next Steps",
	"Critical Context",
] as const;

export const SUMMARIZER_SYSTEM_PROMPT =
	"You summarise the conversation of a coding agent so that it can go on working from your summary alone. Output only the summary, in the exact format asked for.";

const FORMAT = `## Goal
[What the user wants done, in their words where it matters.]

## Constraints & Preferences
- [Requirements, rules and preferences the user stated]

## Progress
### Done
- [x] [Finished work, with file paths]
### In Progress
- [ ] [Work under way]
### Blocked
- [Problems that stop progress, if any]

## Key Decisions
- **[Decision]**: [why]

## Next Steps
1. [What to do next, in order]

## Critical Context
- [Facts needed to continue: exact error messages, paths, commands, values]
- Kernel names worth keeping: [the IPython variables, functions and imports that hold useful state, each with what it holds]`;

const KERNEL_RULE =
	"The agent works in a persistent IPython kernel that is NOT reset by this summary: every variable, function and import defined in earlier cells is still there. Under Critical Context, list the kernel names worth remembering and what each holds, and note that they are still defined and must not be redefined or re-read.";

/**
 * The conversation as plain text for the summariser; a long tool result is shown by its first and
 * last lines and the lines that decide what it did (see `resultExcerpt`).
 */
export function serializeConversation(messages: readonly AgentMessage[]): string {
	const lines: string[] = [];
	for (const message of messages) {
		if (message.role === "user") lines.push(`[User]: ${messageText(message)}`);
		else if (message.role === "host") lines.push(`[Host note (${message.customType})]: ${messageText(message)}`);
		else if (message.role === "assistant") {
			for (const part of message.content) {
				if (part.type === "text" && part.text.trim()) lines.push(`[Assistant]: ${part.text}`);
				else if (part.type === "toolCall") {
					const code = (part.arguments as { code?: unknown }).code;
					lines.push(
						`[Assistant calls ${part.name}]:\n${typeof code === "string" ? code : JSON.stringify(part.arguments)}`,
					);
				}
			}
		} else if (message.role === "toolResult") {
			lines.push(`[${message.isError ? "Tool error" : "Tool result"}]:\n${resultExcerpt(messageText(message))}`);
		}
	}
	return lines.join("\n\n");
}

/**
 * The request for a summary. With a previous summary, the model updates it (keeping what still
 * holds, moving finished work to Done) instead of starting over.
 */
export function summaryRequest(options: {
	conversation: string;
	previousSummary?: string;
	customInstructions?: string;
	kernelNames?: string[];
}): string {
	const parts = [`<conversation>\n${options.conversation}\n</conversation>`];
	if (options.previousSummary) {
		parts.push(`<previous-summary>\n${options.previousSummary}\n</previous-summary>`);
		parts.push(
			"Update the previous summary with the conversation above: keep everything in it that still holds, add what is new, move finished items to Done, and update Next Steps. Use exactly this format:",
		);
	} else {
		parts.push("Summarise the conversation above. Use exactly this format:");
	}
	parts.push(FORMAT);
	parts.push(KERNEL_RULE);
	if (options.kernelNames && options.kernelNames.length > 0) {
		parts.push(`Names defined in the kernel right now: ${options.kernelNames.join(", ")}.`);
	}
	if (options.customInstructions) parts.push(`Additional instructions: ${options.customInstructions}`);
	parts.push("Keep it concise; keep exact paths, names and error messages.");
	return parts.join("\n\n");
}

/** The request for the prefix of a turn cut in two: the kept suffix follows the summary. */
export function turnPrefixRequest(conversation: string): string {
	return `<conversation>\n${conversation}\n</conversation>\n\nThis is the first part of a turn whose later part is kept verbatim after this summary. Summarise, in a few bullet points under "## Original Request" and "## Early Progress", what was asked and what was done so far, so the kept part makes sense. Keep exact paths and names.`;
}
