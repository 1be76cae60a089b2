import { describe, expect, it } from "vitest";
import { describeModelFailure } from "../modes/outcome.js";
import { describeOutputRefusal, parseOutputRefusal } from "./output-refusal.js";

const window = (window: number, promptTokens: number, outputTokens: number) => ({
	kind: "window" as const,
	window,
	promptTokens,
	outputTokens,
});

describe("a refused output size", () => {
	it("is read from vLLM's, OpenAI's and Anthropic's wordings, with the server's numbers", () => {
		// vLLM (older) and OpenAI chat completions, as the OpenAI client reports them (status first).
		expect(
			parseOutputRefusal(
				"400 This model's maximum context length is 24576 tokens. However, you requested 30000 tokens (13616 in the messages, 16384 in the completion). Please reduce the length of the messages or completion.",
			),
		).toEqual(window(24576, 13616, 16384));
		// OpenAI's completions endpoint.
		expect(
			parseOutputRefusal(
				"This model's maximum context length is 4097 tokens, however you requested 4500 tokens (500 in your prompt; 4000 for the completion). Please reduce your prompt; or completion length.",
			),
		).toEqual(window(4097, 500, 4000));
		// vLLM, then its newer wording.
		expect(
			parseOutputRefusal(
				"'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778). None",
			),
		).toEqual(window(4096, 2778, 8000));
		expect(
			parseOutputRefusal(
				"This model's maximum context length is 32768 tokens. However, you requested 8192 output tokens and your prompt contains at least 24577 input tokens, for a total of at least 32769 tokens. Please reduce the length of the input prompt or the number of requested output tokens.",
			),
		).toEqual(window(32768, 24577, 8192));
		// Anthropic.
		expect(
			parseOutputRefusal(
				"input length and `max_tokens` exceed context limit: 190000 + 16384 > 200000, decrease input length or `max_tokens` and try again",
			),
		).toEqual(window(200000, 190000, 16384));
		// OpenAI: more than the model ever answers with.
		expect(
			parseOutputRefusal(
				"max_tokens is too large: 50000. This model supports at most 16384 completion tokens, whereas you provided 50000.",
			),
		).toEqual({ kind: "model-limit", limit: 16384, outputTokens: 50000 });
	});

	it("is not a prompt that fills the window alone (compaction helps there), nor any other error", () => {
		expect(
			parseOutputRefusal(
				"This model's maximum context length is 32768 tokens. However, you requested 0 output tokens and your prompt contains at least 32769 input tokens, for a total of at least 32769 tokens.",
			),
		).toBeUndefined();
		expect(
			parseOutputRefusal(
				"This model's maximum context length is 8192 tokens. However, you requested 9224 tokens (9000 in the messages, 224 in the completion).",
			),
		).toBeUndefined();
		expect(
			parseOutputRefusal("request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it"),
		).toBe(undefined);
		expect(parseOutputRefusal("prompt is too long: 213462 tokens > 200000 maximum")).toBeUndefined();
		expect(parseOutputRefusal("400 status code (no body)")).toBeUndefined();
		expect(parseOutputRefusal(undefined)).toBeUndefined();
	});

	it("is described by its cause and what to do: the window to configure, or room to make", () => {
		const model = { provider: "local", id: "coder", contextWindow: 128_000 };
		expect(describeOutputRefusal(model, window(24576, 13616, 16384))).toBe(
			'The server of local/coder refused the request for the size of the answer it asked for: its context window is 24,576 tokens, and the request asked for 16,384 tokens of answer on top of 13,616 tokens of prompt. local/coder is set up with a window of 128,000 tokens, larger than the server\'s: set "contextWindow": 24576 for it in models.json, so that requests are sized to fit, then retry.',
		);
		expect(describeOutputRefusal({ ...model, contextWindow: 24576 }, window(24576, 13000, 12288))).toBe(
			'The server of local/coder refused the request for the size of the answer it asked for: its context window is 24,576 tokens, and the request asked for 12,288 tokens of answer on top of 13,000 tokens of prompt. The prompt holds more tokens than the agent estimated, so too little room was left for the answer: run /compact to make room, or set a smaller "maxTokens" for local/coder in models.json, then retry.',
		);
		expect(describeOutputRefusal(model, { kind: "model-limit", limit: 16384, outputTokens: 50000 })).toBe(
			'The server of local/coder refused the request for the size of the answer it asked for: the model answers with at most 16,384 tokens, and 50,000 were asked for. Set "maxTokens": 16384 for local/coder in models.json, then retry.',
		);
	});

	it("is how the terminal UI reports the failed call too", () => {
		const model = { provider: "local", id: "coder", baseUrl: "http://127.0.0.1:8000/v1", contextWindow: 128_000 };
		const error =
			"400 This model's maximum context length is 24576 tokens. However, you requested 30000 tokens (13616 in the messages, 16384 in the completion).";
		expect(describeModelFailure(model, error)).toBe(describeOutputRefusal(model, window(24576, 13616, 16384)));
		expect(describeModelFailure(model, "boom")).toBe(
			"The model local/coder at http://127.0.0.1:8000/v1 failed: boom. Check the model id, your key or quota, and the network (`prime-agent doctor` helps), then retry.",
		);
	});
});
