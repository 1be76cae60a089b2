import { join } from "node:path";
import {
	type AssistantMessage,
	type Context,
	fauxAssistantMessage,
	fauxToolCall,
	type Message,
} from "@mariozechner/pi-ai";
import type { FauxSessions } from "prime-agent-test-support/faux-session";
import { wireText } from "prime-agent-test-support/faux-session";
import type { TempWorld } from "prime-agent-test-support/temp-home";

export type AgentStep = AssistantMessage | ((context: Context) => AssistantMessage);

/**
 * A finished assistant answer of `text`, as a session records it (usage of 1 in, 1 out); `from`
 * names the model that gave it (a resumed session picks that model up again).
 */
export function answerMessage(
	text: string,
	from: Pick<AssistantMessage, "api" | "provider" | "model"> = { api: "faux", provider: "faux", model: "faux-1" },
): AssistantMessage {
	return {
		role: "assistant",
		content: [{ type: "text", text }],
		...from,
		usage: {
			input: 1,
			output: 1,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 2,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		},
		stopReason: "stop",
		timestamp: Date.now(),
	};
}

const CHILD_MARK = /^\[Task from your parent agent\. You are its sub-agent "([^"]+)"/;

/** Which agent a provider call comes from: a sub-agent's name (from its first message), else "root". */
export function agentOf(context: Context): string {
	const first = context.messages.find((message) => message.role === "user") as Message | undefined;
	const match = first ? CHILD_MARK.exec(wireText(first)) : null;
	return match ? (match[1] as string) : "root";
}

/**
 * Script several agents sharing one faux provider: each agent's calls take its own steps in order
 * (children run in parallel, so a single queue cannot be ordered). Every context is kept per agent.
 * `side` answers calls that are no agent's turn (a summary, a harness review) when it returns a message.
 */
export function scriptAgents(
	sessions: FauxSessions,
	scripts: Record<string, AgentStep[]>,
	side?: (context: Context) => AssistantMessage | undefined,
): Map<string, Context[]> {
	const seen = new Map<string, Context[]>();
	const step = (context: Context): AssistantMessage => {
		const answer = side?.(context);
		if (answer) return answer;
		const agent = agentOf(context);
		const contexts = seen.get(agent) ?? [];
		contexts.push(JSON.parse(JSON.stringify(context)));
		seen.set(agent, contexts);
		const next = scripts[agent]?.shift();
		if (!next) return fauxAssistantMessage(`(no more steps for ${agent})`);
		return typeof next === "function" ? next(context) : next;
	};
	sessions.faux.setResponses(Array.from({ length: 200 }, () => step));
	return seen;
}

/** Text of the last tool result in a context. */
export function lastToolResult(context: Context | undefined): string {
	const result = context?.messages.filter((message) => message.role === "toolResult").pop();
	return result ? wireText(result as Message) : "";
}

/** Every message text of a context, joined (to look for notices and agent messages). */
export function allText(context: Context | undefined): string {
	return (context?.messages ?? []).map((message) => wireText(message as Message)).join("\n---\n");
}

/** A model turn that runs `code` in the ipython tool. */
export function cell(code: string): AssistantMessage {
	return fauxAssistantMessage(fauxToolCall("ipython", { code }));
}

/** Whether process `pid` still exists. */
export function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

/**
 * Writes an extension that holds every session's start while the file `hold` (in the project)
 * exists, so a test can act on a child that is still starting. Pass `extensionPath` to `start`.
 */
export function holdSessionStarts(world: TempWorld): { extensionPath: string; hold: string } {
	const hold = join(world.project, "hold");
	world.writeProject(
		"hold-ext.mjs",
		`import { existsSync } from "node:fs";\nexport default async function () {\n\twhile (existsSync(${JSON.stringify(hold)})) await new Promise((resolve) => setTimeout(resolve, 20));\n}\n`,
	);
	return { extensionPath: join(world.project, "hold-ext.mjs"), hold };
}

/** A faux step that replies with `text` and remembers the conversation the model was sent. */
export function recordingAnswer(text: string, seen: Context[]): (context: Context) => AssistantMessage {
	return (context: Context) => {
		seen.push(JSON.parse(JSON.stringify(context)));
		return fauxAssistantMessage(text);
	};
}

/** Each message of a request as `role:first text` (or the first tool call's name). */
export function sentTexts(context: Context): string[] {
	return context.messages.map((message) => {
		if (typeof message.content === "string") return `${message.role}:${message.content}`;
		const first = message.content[0] as { type: string; text?: string; name?: string };
		return `${message.role}:${first.text ?? first.name}`;
	});
}
