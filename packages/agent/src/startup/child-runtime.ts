import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { ChildRuntime } from "../children/index.js";
import type { StartedSession } from "./started-session.js";

/** A started child session as the parent's registry sees it. */
export function childRuntime(started: StartedSession): ChildRuntime {
	const agentSession = started.agentSession;
	let aborted = false;
	// An abort that lands between turns (the prompt's preamble) stops the run as soon as it starts.
	agentSession.subscribe((event) => {
		if (aborted && event.type === "agent_start") agentSession.abort();
	});
	return {
		sessionFile: started.session.path,
		prompt: async (text) => {
			if (aborted) return { status: "aborted" };
			const outcome = await agentSession.prompt(text);
			return { status: outcome.status, errorMessage: outcome.errorMessage };
		},
		onAssistant: (listener) =>
			agentSession.subscribe((event) => {
				if (event.type !== "message_end" || event.message.role !== "assistant") return;
				const message = event.message as AssistantMessage;
				const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
				listener({ text, usage: message.usage });
			}),
		onChildUsage: (listener) => started.onChildUsage(listener),
		onWokenTurnEnd: (listener) =>
			agentSession.onWakeOutcome((outcome) => listener({ status: outcome.status, errorMessage: outcome.errorMessage })),
		isIdle: () => agentSession.isIdle() && started.children.isIdle(),
		get hasLiveChildren() {
			return started.children.hasLiveChildren;
		},
		get hasHeartbeat() {
			return started.heartbeat?.heartbeat !== undefined;
		},
		abort: () => {
			aborted = true;
			agentSession.abort();
		},
		dispose: () => started.dispose(),
	};
}
