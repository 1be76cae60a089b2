import { type AssistantMessage, type Context, fauxAssistantMessage, type Message } from "@mariozechner/pi-ai";
import type { FauxSessions } from "./faux-session.js";
import { wireText } from "./faux-session.js";

export type AgentStep = AssistantMessage | ((context: Context) => AssistantMessage);

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
 */
export function scriptAgents(sessions: FauxSessions, scripts: Record<string, AgentStep[]>): Map<string, Context[]> {
	const seen = new Map<string, Context[]>();
	const step = (context: Context): AssistantMessage => {
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
