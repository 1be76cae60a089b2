import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** The summariser's system prompt opens with this (`SUMMARIZER_SYSTEM_PROMPT`). */
const SUMMARIZER = "You summarise the conversation";

/** One request the server received. */
export interface WindowCall {
	/** A summary request (the summariser's system prompt), not one of the agent's turns. */
	summary: boolean;
	/** Prompt tokens as the server counts them: characters / 4 of every text it was sent. */
	prompt: number;
	/** `max_tokens` (or `max_completion_tokens`) asked for; undefined when the request named none. */
	maxTokens: number | undefined;
	/** Refused because `prompt + maxTokens` exceeds the window (an enforcing server only). */
	refused: boolean;
	body: Record<string, unknown>;
}

export interface WindowServer {
	baseUrl: string;
	calls: WindowCall[];
	close(): Promise<void>;
}

export interface WindowServerOptions {
	/** The server's own context window, in its tokens. */
	window: number;
	/** Refuse a request whose prompt and requested output exceed the window, with vLLM's error (a 400). */
	enforce: boolean;
	/** The model's answer to the agent's `n`-th request (from 0): a cell of `ipython`, or a final text. */
	reply(n: number): { code: string } | { text: string };
	/** The summariser's answer to its `n`-th request (from 0). */
	summary?(n: number): string;
}

/** Characters / 4 of the texts a chat-completions body sends: the system prompt, the messages, the tool calls' arguments. */
export function countPromptTokens(body: Record<string, unknown>): number {
	let chars = 0;
	for (const message of body.messages as { content?: unknown; tool_calls?: { function: { arguments: string } }[] }[]) {
		if (typeof message.content === "string") chars += message.content.length;
		else if (Array.isArray(message.content))
			for (const part of message.content as { text?: string }[]) chars += part.text?.length ?? 0;
		for (const call of message.tool_calls ?? []) chars += call.function.arguments.length;
	}
	return Math.ceil(chars / 4);
}

/**
 * An OpenAI-compatible chat-completions server (`POST /v1/chat/completions`, streaming) that reports
 * real usage: the prompt's characters / 4, the answer's characters / 4. With `enforce` it holds the
 * window as vLLM does: a request whose prompt and `max_tokens` together exceed it is refused with
 * vLLM's own error text, however short the answer would have been.
 */
export async function windowServer(options: WindowServerOptions): Promise<WindowServer> {
	const calls: WindowCall[] = [];
	let turns = 0;
	let summaries = 0;
	const server = createServer((req, res) => {
		let raw = "";
		req.on("data", (chunk) => {
			raw += chunk;
		});
		req.on("end", () => {
			if (req.method !== "POST" || req.url?.split("?")[0] !== "/v1/chat/completions") {
				res.writeHead(404).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
				return;
			}
			const body = JSON.parse(raw) as Record<string, unknown>;
			const messages = body.messages as { role: string; content?: unknown }[];
			const system = messages.find((message) => message.role === "system" || message.role === "developer");
			const summary = typeof system?.content === "string" && system.content.startsWith(SUMMARIZER);
			const prompt = countPromptTokens(body);
			const asked = (body.max_tokens ?? body.max_completion_tokens) as number | undefined;
			const refused = options.enforce && prompt + (asked ?? 0) > options.window;
			calls.push({ summary, prompt, maxTokens: asked, refused, body });
			if (refused) {
				res.writeHead(400, { "content-type": "application/json" });
				// vLLM's body since it answers errors as OpenAI does (`{"error": {...}}`).
				res.end(
					JSON.stringify({
						error: {
							message: `This model's maximum context length is ${options.window} tokens. However, you requested ${prompt + (asked ?? 0)} tokens (${prompt} in the messages, ${asked} in the completion). Please reduce the length of the messages or completion.`,
							type: "BadRequestError",
							param: null,
							code: 400,
						},
					}),
				);
				return;
			}
			const reply = summary
				? { text: options.summary?.(summaries++) ?? `## Goal\nSummary ${summaries}.` }
				: options.reply(turns++);
			stream(res, calls.length, reply, prompt);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		calls,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

function stream(res: ServerResponse, id: number, reply: { code: string } | { text: string }, prompt: number): void {
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
	const chunk = (delta: unknown, finish: string | null = null) =>
		res.write(
			`data: ${JSON.stringify({ id: `c${id}`, object: "chat.completion.chunk", created: 0, model: "loopback", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
		);
	let answered: string;
	if ("text" in reply) {
		answered = reply.text;
		chunk({ role: "assistant", content: "" });
		for (const piece of reply.text.match(/.{1,64}/gs) ?? []) chunk({ content: piece });
		chunk({}, "stop");
	} else {
		answered = JSON.stringify({ code: reply.code });
		chunk({
			role: "assistant",
			tool_calls: [
				{ index: 0, id: `call_${id}`, type: "function", function: { name: "ipython", arguments: answered } },
			],
		});
		chunk({}, "tool_calls");
	}
	const completion = Math.ceil(answered.length / 4);
	const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
	res.write(
		`data: ${JSON.stringify({ id: `c${id}`, object: "chat.completion.chunk", created: 0, model: "loopback", choices: [], usage })}\n\n`,
	);
	res.end("data: [DONE]\n\n");
}
