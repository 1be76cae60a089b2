import { describeOutputRefusal, parseOutputRefusal } from "../providers/output-refusal.js";
import { endSentence } from "../sentence.js";

/** How JSON.parse says a text is no JSON (V8's wordings). */
const NOT_JSON = /in JSON at position \d+|Unexpected token .* is not valid JSON|Unexpected end of JSON input/;

/** A failed model call for the user: which model (and server) failed, the provider's cause, what to do. */
export function describeModelFailure(
	model: { provider: string; id: string; baseUrl?: string; contextWindow?: number },
	errorMessage: string | undefined,
): string {
	const refusal = parseOutputRefusal(errorMessage);
	if (refusal) return describeOutputRefusal(model, refusal);
	let cause = (errorMessage ?? "unknown error").trim();
	// A reply that is no JSON says nothing of where it came from: most often not the model's API.
	if (NOT_JSON.test(cause)) cause = `its reply is not valid JSON (${cause}), so "baseUrl" may not be the server's API`;
	// The address tells a local-server user at once which server (and port) did not answer.
	const where = model.baseUrl ? ` at ${model.baseUrl}` : "";
	return `The model ${model.provider}/${model.id}${where} failed: ${endSentence(cause)} Check the model id, your key or quota, and the network (\`prime-agent doctor\` helps), then retry.`;
}
