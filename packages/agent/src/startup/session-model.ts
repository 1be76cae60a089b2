import type { Api, Model } from "@mariozechner/pi-ai";
import { ExitCode, UserError } from "../errors.js";
import { chooseDefaultModel, DEFAULT_MODELS, type ModelRegistry, resolveModelRef } from "../providers/index.js";
import { buildSessionContext } from "../session/index.js";
import type { StartConfig } from "./configuration.js";
import type { SessionPlan } from "./session-plan.js";

/** The model a session starts with, and its key: a string, or a function that says why there is none. */
export interface SessionModel {
	model: Model<Api>;
	apiKey: string | (() => string);
}

/**
 * The model a run starts with: `--model`, else the one the picked session last used (when the
 * registry knows it), else settings.json's `defaultModel` or the first provider with a key. See
 * `chooseSessionModel` for `allowMissingKey`.
 */
export function startModel(
	config: StartConfig,
	plan: SessionPlan,
	options: { model?: string; allowMissingKey?: boolean },
): SessionModel {
	const { registry, credentials } = config;
	// A picked-up session keeps its model unless --model says otherwise.
	const recorded =
		plan.kind === "new" ? undefined : buildSessionContext(plan.picked.branch(plan.at ?? plan.picked.leafId)).model;
	const recordedModel = recorded ? registry.find(recorded.provider, recorded.modelId) : undefined;
	return chooseSessionModel(
		registry,
		() =>
			options.model
				? resolveModelRef(registry, credentials, options.model)
				: (recordedModel ?? chooseDefaultModel(registry, credentials, config.settings.defaultModel)),
		(chosen) => credentials.require(chosen.provider).key,
		options.allowMissingKey === true,
	);
}

/**
 * The session's model and key for the parts made before the session itself (the harness's
 * refinements, the skill creator): the starting model until `follow` names the session, then the
 * model the session uses at the time of the call (`/model` changes it).
 */
export class CurrentModel {
	private session: { readonly model: Model<Api> } | undefined;

	constructor(private readonly start: SessionModel) {}

	follow(session: { readonly model: Model<Api> }): void {
		this.session = session;
	}

	readonly model = (): Model<Api> => this.session?.model ?? this.start.model;

	/** The key; a function key throws the error that says why there is none. */
	readonly apiKey = (): string => (typeof this.start.apiKey === "string" ? this.start.apiKey : this.start.apiKey());
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
