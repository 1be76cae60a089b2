import type { Api, Model } from "@mariozechner/pi-ai";
import { estimateEntryTokens, estimateTokens } from "../compaction/index.js";
import { ExitCode, UserError } from "../errors.js";
import { compactionBoundary, type Session } from "../session/index.js";

/*
 * A user message larger than the model's whole context window can never be sent: the provider
 * refuses every request that holds it, and compaction cannot help (the summariser is given user
 * messages whole). So such a message is refused before it is recorded or sent, and a session whose
 * branch already holds one (a hand-edited file) is not sent at all. Everything else that is too
 * large together is left to compaction.
 */

const LARGE_TEXT_HINT =
	"Put the large text in a file and ask the agent to read it with Python (for example: summarise notes.txt), so only what it prints enters the conversation.";

/** Throws a UserError when `text`, as one user message, is larger than the model's window. */
export function refuseOversizePrompt(text: string, model: Model<Api>): void {
	const tokens = estimateTokens({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
	if (!exceeds(tokens, model)) return;
	throw new UserError(
		`The message is about ${count(tokens)} tokens (${count(text.length)} characters), more than the whole context window of ${modelName(model)} (${count(model.contextWindow)} tokens). It was not sent.`,
		LARGE_TEXT_HINT,
		ExitCode.usage,
	);
}

/**
 * Throws a UserError when a user message the model would be sent from the session's branch (after
 * its newest compaction) is larger than the model's window: naming the entry and how to continue
 * from the one before it.
 */
export function refuseOversizeHistory(session: Session, model: Model<Api>): void {
	const branch = session.branch();
	const { start } = compactionBoundary(branch);
	for (const entry of branch.slice(start)) {
		if (entry.type !== "message" || entry.message.role !== "user") continue;
		const tokens = estimateEntryTokens(entry);
		if (!exceeds(tokens, model)) continue;
		const before = entry.parentId
			? `Continue from the entry before it: \`prime-agent --resume ${session.commandRef} --at ${entry.parentId}\` (the message stays in the file, on a branch left behind; \`prime-agent sessions ${session.commandRef}\` lists the entries).`
			: "It is the session's first entry: start a new session.";
		throw new UserError(
			`Session ${session.id} holds a user message (entry ${entry.id}) of about ${count(tokens)} tokens, more than the whole context window of ${modelName(model)} (${count(model.contextWindow)} tokens), so no request holding it can be sent; nothing was sent.`,
			`${before} ${LARGE_TEXT_HINT}`,
			ExitCode.usage,
		);
	}
}

function exceeds(tokens: number, model: Model<Api>): boolean {
	return model.contextWindow > 0 && tokens > model.contextWindow;
}

function modelName(model: Model<Api>): string {
	return `${model.provider}/${model.id}`;
}

function count(value: number): string {
	return value.toLocaleString("en-US");
}
