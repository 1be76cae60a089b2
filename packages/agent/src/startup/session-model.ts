import type { Api, Model } from "@mariozechner/pi-ai";
import { ExitCode, UserError } from "../errors.js";
import { DEFAULT_MODELS, type ModelRegistry } from "../providers/index.js";

/** The model a session starts with, and its key: a string, or a function that says why there is none. */
export interface SessionModel {
	model: Model<Api>;
	apiKey: string | (() => string);
}

/**
 * Choose the session's model and find its key. Without `allowMissing` both are checked now and a
 * failure is the `UserError` to show. With it (a `-p` slash command, which may need no model at
 * all), a missing key, or no model to choose because no provider has a key, is only said when a
 * model call asks for the key: the session starts on the model the first key would choose, and every
 * model call fails with the same error (exit code 3) the start would have raised. Any other problem
 * (an unknown `--model`, a broken models.json) is still raised at once.
 */
export function chooseSessionModel(
	registry: ModelRegistry,
	choose: () => Model<Api>,
	keyOf: (model: Model<Api>) => string,
	allowMissing: boolean,
): SessionModel {
	if (!allowMissing) {
		const model = choose();
		return { model, apiKey: keyOf(model) };
	}
	let model: Model<Api>;
	try {
		model = choose();
	} catch (error) {
		if (!isMissingCredentials(error)) throw error;
		return { model: registry.resolve(DEFAULT_MODELS[0] as string), apiKey: sayAtCall(error) };
	}
	try {
		return { model, apiKey: keyOf(model) };
	} catch (error) {
		if (!isMissingCredentials(error)) throw error;
		return { model, apiKey: sayAtCall(error) };
	}
}

function isMissingCredentials(error: unknown): error is UserError {
	return error instanceof UserError && error.exitCode === ExitCode.missingCredentials;
}

function sayAtCall(error: UserError): () => string {
	return () => {
		throw error;
	};
}
