/**
 * A server that refused a request for the size of the answer it asked for, not for its prompt.
 * `window`: the prompt fits the server's window but the prompt and the requested output together
 * do not (a server that enforces its window: vLLM, OpenAI, Anthropic). `model-limit`: the model
 * answers with fewer tokens than were asked for (OpenAI). Compacting the conversation does not
 * help with either: the size asked for, or the window the agent believes in, is wrong.
 */
export type OutputRefusal =
	| { kind: "window"; window: number; promptTokens: number; outputTokens: number }
	| { kind: "model-limit"; limit: number; outputTokens: number };

type Numbers = { window: number; prompt: number; output: number };

/** The servers' wordings that name the requested output, each read into its numbers. */
const WINDOW_REFUSALS: { pattern: RegExp; read: (match: number[]) => Numbers }[] = [
	// vLLM (older) and OpenAI: "This model's maximum context length is N tokens. However, you requested
	// M tokens (P in the messages, Q in the completion)."; the completions endpoint says "P in your prompt; Q for the completion".
	{
		pattern:
			/maximum context length is (\d+) tokens[.,] however,? you requested \d+ tokens \((\d+) in (?:the messages|your prompt)[,;] (\d+) (?:in|for) the completion\)/i,
		read: ([window, prompt, output]) => ({ window, prompt, output }) as Numbers,
	},
	// vLLM: "'max_tokens' or 'max_completion_tokens' is too large: Q. This model's maximum context length
	// is N tokens and your request has P input tokens (Q > N - P)."
	{
		pattern:
			/max_(?:completion_)?tokens'? is too large: (\d+)\. This model's maximum context length is (\d+) tokens and your request has (\d+) input tokens/i,
		read: ([output, window, prompt]) => ({ window, prompt, output }) as Numbers,
	},
	// vLLM (newer): "This model's maximum context length is N tokens. However, you requested Q output
	// tokens and your prompt contains at least P input tokens, for a total of at least M tokens."
	{
		pattern:
			/maximum context length is (\d+) tokens\. However, you requested (\d+) output tokens and your prompt contains (?:at least )?(\d+) input tokens/i,
		read: ([window, output, prompt]) => ({ window, prompt, output }) as Numbers,
	},
	// Anthropic: "input length and `max_tokens` exceed context limit: P + Q > N, decrease input length or `max_tokens` and try again"
	{
		pattern: /input length and `?max_tokens`? exceed context limit: (\d+) \+ (\d+) > (\d+)/i,
		read: ([prompt, output, window]) => ({ window, prompt, output }) as Numbers,
	},
];

/** OpenAI: "max_tokens is too large: Q. This model supports at most L completion tokens, whereas you provided Q." */
const MODEL_LIMIT =
	/max_(?:completion_)?tokens'? is too large: (\d+)\. This model supports at most (\d+) completion tokens/i;

/**
 * The output refusal a provider's error message states, or undefined for any other error. A
 * refusal whose prompt alone fills the window is a context overflow (compaction helps), not this.
 */
export function parseOutputRefusal(errorMessage: string | undefined): OutputRefusal | undefined {
	if (!errorMessage) return undefined;
	for (const { pattern, read } of WINDOW_REFUSALS) {
		const match = pattern.exec(errorMessage);
		if (!match) continue;
		const { window, prompt, output } = read(match.slice(1).map(Number));
		if (prompt >= window || output === 0) return undefined;
		return { kind: "window", window, promptTokens: prompt, outputTokens: output };
	}
	const limit = MODEL_LIMIT.exec(errorMessage);
	if (limit) return { kind: "model-limit", outputTokens: Number(limit[1]), limit: Number(limit[2]) };
	return undefined;
}

const count = (value: number) => value.toLocaleString("en-US");

/**
 * What happened and what to do, for the user. `model.contextWindow`: the window the agent sizes
 * requests to; a server with a smaller one is named as the cause.
 */
export function describeOutputRefusal(
	model: { provider: string; id: string; contextWindow?: number },
	refusal: OutputRefusal,
): string {
	const name = `${model.provider}/${model.id}`;
	if (refusal.kind === "model-limit") {
		return `The server of ${name} refused the request for the size of the answer it asked for: the model answers with at most ${count(refusal.limit)} tokens, and ${count(refusal.outputTokens)} were asked for. Set "maxTokens": ${refusal.limit} for ${name} in models.json, then retry.`;
	}
	const what = `The server of ${name} refused the request for the size of the answer it asked for: its context window is ${count(refusal.window)} tokens, and the request asked for ${count(refusal.outputTokens)} tokens of answer on top of ${count(refusal.promptTokens)} tokens of prompt.`;
	const configured = model.contextWindow ?? 0;
	if (configured > refusal.window) {
		return `${what} ${name} is set up with a window of ${count(configured)} tokens, larger than the server's: set "contextWindow": ${refusal.window} for it in models.json, so that requests are sized to fit, then retry.`;
	}
	return `${what} The prompt holds more tokens than the agent estimated, so too little room was left for the answer: run /compact to make room, or set a smaller "maxTokens" for ${name} in models.json, then retry.`;
}
