import type { Api, Model } from "@mariozechner/pi-ai";
import { ExitCode, UserError } from "../errors.js";
import { closeMatches } from "./close-matches.js";
import type { Credentials } from "./credentials.js";
import type { ModelRegistry } from "./registry.js";

/** Used when neither `--model` nor settings name a model: the first provider with a key wins. */
export const DEFAULT_MODELS: readonly string[] = [
	"anthropic/claude-sonnet-4-5",
	"openai/gpt-5",
	"google/gemini-2.5-pro",
	"openrouter/anthropic/claude-sonnet-4.5",
	"xai/grok-4",
	"mistral/devstral-medium-latest",
	"groq/openai/gpt-oss-120b",
];

export function chooseDefaultModel(
	registry: ModelRegistry,
	credentials: Credentials,
	settingsModel: string | undefined,
): Model<Api> {
	if (settingsModel) return resolveModelRef(registry, credentials, settingsModel);
	for (const ref of DEFAULT_MODELS) {
		const model = registry.resolve(ref);
		if (credentials.has(model.provider)) return model;
	}
	// A single user-configured local model is an obvious choice.
	const custom = Object.entries(registry.file.providers).flatMap(([provider, config]) =>
		(config.models ?? []).map((model) => `${provider}/${model.id}`),
	);
	if (custom.length === 1) return registry.resolve(custom[0] as string);
	throw new UserError(
		"No model selected and no provider key found.",
		'Pass --model provider/id (e.g. --model anthropic/claude-sonnet-4-5), export a key such as ANTHROPIC_API_KEY or OPENAI_API_KEY, or set "defaultModel" in settings.json.',
		ExitCode.missingCredentials,
	);
}

/**
 * Resolve `--model`: `provider/id`, or a bare id when exactly one provider offering it has a key
 * (or only one provider offers it at all); otherwise a user error naming the candidates.
 */
export function resolveModelRef(registry: ModelRegistry, credentials: Credentials, ref: string): Model<Api> {
	const owners = ref.includes("/") ? [] : registry.providersOf(ref);
	if (owners.length === 0 && !ref.includes("/")) {
		// A bare id no provider offers: most likely a typo of one that does.
		const ids = [...new Set(registry.refs().map((full) => full.slice(full.indexOf("/") + 1)))];
		const close = closeMatches(ref, ids, 3).flatMap((id) =>
			registry.providersOf(id).map((provider) => `${provider}/${id}`),
		);
		throw new UserError(
			`No provider offers a model "${ref}".`,
			close.length > 0
				? `Did you mean ${close.slice(0, 5).join(", ")}? Pass it as --model provider/id.`
				: "Pass --model provider/id, e.g. --model anthropic/claude-sonnet-4-5 or --model ollama/qwen2.5-coder:14b.",
			ExitCode.usage,
		);
	}
	if (owners.length === 0) return registry.resolve(ref);
	const withKey = owners.filter((provider) => credentials.has(provider));
	const pick = withKey.length === 1 ? withKey : owners.length === 1 ? owners : [];
	if (pick.length === 1) return registry.resolve(`${pick[0]}/${ref}`);
	const candidates = withKey.length > 1 ? withKey : owners;
	throw new UserError(
		`Several providers offer "${ref}"${withKey.length > 1 ? " and have a key" : ""}.`,
		`Name one: ${candidates.map((provider) => `--model ${provider}/${ref}`).join(", ")}.`,
		ExitCode.usage,
	);
}
