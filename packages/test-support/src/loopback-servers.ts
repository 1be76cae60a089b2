import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { kernelPythonForTests } from "./kernel-python.js";
import { makeTempWorld, type TempWorld } from "./temp-home.js";

/** One scripted model reply: either a tool call of `ipython` with this code, or a final text. */
export type ScriptedReply =
	| { code: string }
	| { text: string }
	| { status: number; error: string }
	/** Answered 200 with this body as it is (not a stream of chunks). */
	| { body: string };

export interface LoopbackServer {
	baseUrl: string;
	/** Parsed JSON bodies of every request, in order. */
	requests: Record<string, unknown>[];
	/** Request headers, in order. */
	headers: IncomingMessage["headers"][];
	close(): Promise<void>;
}

async function serve(
	handler: (body: Record<string, unknown>, res: ServerResponse, index: number) => void,
	pathSuffix: string,
): Promise<LoopbackServer & { server: Server }> {
	const requests: Record<string, unknown>[] = [];
	const headers: IncomingMessage["headers"][] = [];
	const server = createServer((req, res) => {
		let raw = "";
		req.on("data", (chunk) => {
			raw += chunk;
		});
		req.on("end", () => {
			// The model list, as real servers have it beside their API (`prime-agent doctor` asks for it).
			if (req.method === "GET" && req.url === "/v1/models") {
				res.writeHead(200, { "content-type": "application/json" });
				res.end(JSON.stringify({ object: "list", data: [{ id: "loopback", object: "model" }] }));
				return;
			}
			// Only the API's own path, as real servers: a baseUrl without its `/v1` gets a 404.
			if (req.method !== "POST" || req.url?.split("?")[0] !== pathSuffix) {
				res.writeHead(404).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
				return;
			}
			const body = JSON.parse(raw) as Record<string, unknown>;
			requests.push(body);
			headers.push(req.headers);
			handler(body, res, requests.length - 1);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	return {
		server,
		baseUrl: `http://127.0.0.1:${port}`,
		requests,
		headers,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** A request a server received and holds open without answering, as a slow provider does. */
export interface HeldRequest {
	body: Record<string, unknown>;
	/** Resolves once the client gave up on it (closed the connection, as an aborted call does). */
	closed: Promise<void>;
}

export interface HoldingServer extends LoopbackServer {
	/** Resolves with the `n`-th held request (from 0) once it has arrived. */
	held(n: number): Promise<HeldRequest>;
}

/**
 * A server speaking the OpenAI chat-completions streaming protocol (`POST /v1/chat/completions`).
 * `hold`: requests it picks are never answered (they still count in `index` and `requests`).
 */
export async function openAiCompletionsServer(
	script: ScriptedReply[],
	options: { hold?: (body: Record<string, unknown>, index: number) => boolean } = {},
): Promise<HoldingServer> {
	const held: HeldRequest[] = [];
	const heldWaiters: (() => void)[] = [];
	const served = await serve((body, res, index) => {
		if (options.hold?.(body, index)) {
			held.push({ body, closed: new Promise((resolve) => res.on("close", () => resolve())) });
			for (const wake of heldWaiters.splice(0)) wake();
			return;
		}
		const reply = script[index] ?? { text: "(script exhausted)" };
		if (answeredAsIs(reply, res, (message) => ({ error: { message, type: "invalid_request_error" } }))) return;
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const chunk = (delta: unknown, finish: string | null = null) =>
			res.write(
				`data: ${JSON.stringify({ id: `c${index}`, object: "chat.completion.chunk", created: 0, model: "loopback", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
			);
		if ("text" in reply) {
			chunk({ role: "assistant", content: "" });
			for (const piece of reply.text.match(/.{1,8}/gs) ?? []) chunk({ content: piece });
			chunk({}, "stop");
		} else {
			const code = reply.code;
			const args = JSON.stringify({ code });
			chunk({
				role: "assistant",
				tool_calls: [{ index: 0, id: `call_${index}`, type: "function", function: { name: "ipython", arguments: "" } }],
			});
			chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 10) } }] });
			chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(10) } }] });
			chunk({}, "tool_calls");
		}
		res.write(
			`data: ${JSON.stringify({ id: `c${index}`, object: "chat.completion.chunk", created: 0, model: "loopback", choices: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } })}\n\n`,
		);
		res.end("data: [DONE]\n\n");
	}, "/v1/chat/completions");
	const nth = async (n: number): Promise<HeldRequest> => {
		while (!held[n]) await new Promise<void>((resolve) => heldWaiters.push(resolve));
		return held[n] as HeldRequest;
	};
	return { ...served, baseUrl: `${served.baseUrl}/v1`, held: nth };
}

/**
 * Answer a scripted failure (its status, with the error `errorBody` shapes as the protocol does) or a
 * scripted raw body; false for an answer or a cell, which the protocol streams.
 */
function answeredAsIs(
	reply: ScriptedReply,
	res: ServerResponse,
	errorBody: (message: string) => Record<string, unknown>,
): reply is Extract<ScriptedReply, { status: number } | { body: string }> {
	if ("status" in reply) {
		res.writeHead(reply.status, { "content-type": "application/json" });
		res.end(JSON.stringify(errorBody(reply.error)));
		return true;
	}
	if ("body" in reply) {
		res.writeHead(200, { "content-type": "text/event-stream" });
		res.end(reply.body);
		return true;
	}
	return false;
}

/** A server speaking the Anthropic messages streaming protocol (`POST /v1/messages`). */
export async function anthropicMessagesServer(script: ScriptedReply[]): Promise<LoopbackServer> {
	return serve((_body, res, index) => {
		const reply = script[index] ?? { text: "(script exhausted)" };
		if (answeredAsIs(reply, res, (message) => ({ type: "error", error: { type: "invalid_request_error", message } })))
			return;
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const event = (type: string, data: Record<string, unknown>) =>
			res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
		event("message_start", {
			message: {
				id: `msg_${index}`,
				type: "message",
				role: "assistant",
				model: "loopback",
				content: [],
				stop_reason: null,
				stop_sequence: null,
				usage: { input_tokens: 100, output_tokens: 1 },
			},
		});
		let stop = "end_turn";
		if ("text" in reply) {
			event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
			for (const piece of reply.text.match(/.{1,8}/gs) ?? []) {
				event("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
			}
		} else {
			const code = reply.code;
			const args = JSON.stringify({ code });
			event("content_block_start", {
				index: 0,
				content_block: { type: "tool_use", id: `toolu_${index}`, name: "ipython", input: {} },
			});
			event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: args.slice(0, 10) } });
			event("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: args.slice(10) } });
			stop = "tool_use";
		}
		event("content_block_stop", { index: 0 });
		event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
		event("message_stop", {});
		res.end();
	}, "/v1/messages");
}

/** A loopback port nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
	const server = createServer();
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const { port } = server.address() as AddressInfo;
	await new Promise<void>((resolve) => server.close(() => resolve()));
	return port;
}

/**
 * A temp world with the kernel and an OpenAI-compatible loopback server playing `script`, named in
 * models.json as the model `local/coder`. Close the server and clean the world up after the test.
 */
export async function localModelWorld(script: ScriptedReply[]): Promise<{ world: TempWorld; server: LoopbackServer }> {
	const world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	const server = await openAiCompletionsServer(script);
	world.writeHome("models.json", {
		providers: { local: { baseUrl: server.baseUrl, api: "openai-completions", models: [{ id: "coder" }] } },
	});
	return { world, server };
}

/**
 * A temp world with the kernel and an Anthropic-messages loopback server playing `script`, named in
 * models.json as the model `proxy/claude-loopback` whose key is read from `LOOPBACK_KEY`. Close the
 * server and clean the world up after the test.
 */
export async function anthropicModelWorld(
	script: ScriptedReply[],
): Promise<{ world: TempWorld; server: LoopbackServer }> {
	const server = await anthropicMessagesServer(script);
	const world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(), LOOPBACK_KEY: "sk-loopback" });
	world.writeHome("models.json", {
		providers: {
			proxy: {
				baseUrl: server.baseUrl,
				api: "anthropic-messages",
				apiKeyEnv: "LOOPBACK_KEY",
				models: [{ id: "claude-loopback", contextWindow: 200000, maxTokens: 8192 }],
			},
		},
	});
	return { world, server };
}
