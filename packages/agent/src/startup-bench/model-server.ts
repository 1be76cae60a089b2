/**
 * The benchmark's model: an OpenAI-compatible chat-completions server on loopback that streams at
 * once, so the figures are the agent's own. It answers by the conversation's last message: a
 * prompt asking to "compute" gets an `ipython` cell, the cell's result a closing line, anything
 * else a short answer whose first word is `FIRST_WORD`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The first streamed word of a plain answer: its showing is the first answer token. */
export const FIRST_WORD = "Pong";
/** The last word of a plain answer. */
export const LAST_WORD = "answers.";
/** The code of the cell a "compute" prompt gets (it leaves a variable for a model switch to carry). */
export const CELL_CODE = "answer = 6 * 7\nprint('answer is', answer)";
/** The text after the cell's result. */
export const AFTER_CELL = "Computed.";

export interface ModelServer {
	/** The `baseUrl` for models.json. */
	baseUrl: string;
	close(): Promise<void>;
}

export async function startModelServer(): Promise<ModelServer> {
	let calls = 0;
	const server: Server = createServer((req, res) => {
		let raw = "";
		req.on("data", (chunk) => {
			raw += chunk;
		});
		req.on("end", () => {
			if (req.method !== "POST" || !req.url?.startsWith("/v1/chat/completions")) {
				res.writeHead(404).end();
				return;
			}
			const id = `bench${++calls}`;
			const messages = (JSON.parse(raw) as { messages: { role: string; content: unknown }[] }).messages;
			const last = messages.at(-1);
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
			const chunk = (delta: unknown, finish: string | null = null) =>
				res.write(
					`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
				);
			if (last?.role === "user" && JSON.stringify(last.content).includes("compute")) {
				const args = JSON.stringify({ code: CELL_CODE });
				chunk({
					role: "assistant",
					tool_calls: [
						{ index: 0, id: `call_${id}`, type: "function", function: { name: "ipython", arguments: args } },
					],
				});
				chunk({}, "tool_calls");
			} else {
				chunk({ role: "assistant", content: "" });
				const text = last?.role === "tool" ? AFTER_CELL : `${FIRST_WORD}: the loopback model ${LAST_WORD}`;
				for (const piece of text.match(/\S+\s*/g) ?? []) chunk({ content: piece });
				chunk({}, "stop");
			}
			res.write(
				`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "bench", choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } })}\n\n`,
			);
			res.end("data: [DONE]\n\n");
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
