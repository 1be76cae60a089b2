import { type Api, getModels, getProviders, type Model } from "@mariozechner/pi-ai";
import { ExitCode, UserError } from "../errors.js";
import { closeMatches } from "./close-matches.js";
import { type CustomProviderConfig, type ModelsFile, toModel } from "./models-file.js";

/**
 * Every model the agent can use: pi-ai's catalogue, adjusted and extended by models.json.
 * Extra models (the faux provider in tests, an embedding host's own) can be added with `add`.
 */
export class ModelRegistry {
	private readonly models = new Map<string, Map<string, Model<Api>>>();

	constructor(readonly file: ModelsFile = { providers: {} }) {
		for (const provider of getProviders()) {
			const override = file.providers[provider];
			for (const model of getModels(provider)) {
				this.add(override && !override.models ? applyOverride(model, override) : model);
			}
		}
		for (const [provider, config] of Object.entries(file.providers)) {
			for (const model of config.models ?? []) this.add(toModel(provider, config, model));
		}
	}

	add(model: Model<Api>): void {
		let byId = this.models.get(model.provider);
		if (!byId) {
			byId = new Map();
			this.models.set(model.provider, byId);
		}
		byId.set(model.id, model);
	}

	providers(): string[] {
		return [...this.models.keys()].sort();
	}

	modelsOf(provider: string): Model<Api>[] {
		return [...(this.models.get(provider)?.values() ?? [])];
	}

	find(provider: string, id: string): Model<Api> | undefined {
		return this.models.get(provider)?.get(id);
	}

	/** Resolve `provider/id`; an unknown provider or model is a user error listing what exists. */
	resolve(ref: string): Model<Api> {
		const { provider, id } = parseModelRef(ref);
		const byId = this.models.get(provider);
		if (!byId) {
			const close = closeMatches(provider, this.providers(), 3);
			throw new UserError(
				`Unknown provider "${provider}" in --model ${ref}.`,
				close.length > 0
					? `Did you mean ${close.map((name) => `${name}/${id}`).join(" or ")}? A local server can be added in models.json (see the README).`
					: `Known providers: ${this.providers().join(", ")}. A local server can be added in models.json (see the README).`,
				ExitCode.usage,
			);
		}
		const model = byId.get(id);
		if (!model) {
			const close = closeMatches(id, [...byId.keys()]);
			throw new UserError(
				`Unknown model "${id}" for provider "${provider}".`,
				close.length > 0
					? `Did you mean ${close.map((candidate) => `${provider}/${candidate}`).join(", ")}? (Or add it to models.json.)`
					: `None of its ${byId.size} models is close (they include ${[...byId.keys()]
							.slice(0, 3)
							.map((candidate) => `${provider}/${candidate}`)
							.join(", ")}); or add the model to models.json.`,
				ExitCode.usage,
			);
		}
		return model;
	}

	/** Every model as `provider/id`. */
	refs(): string[] {
		return [...this.models.entries()].flatMap(([provider, byId]) => [...byId.keys()].map((id) => `${provider}/${id}`));
	}

	/** Providers offering a model with exactly this id. */
	providersOf(id: string): string[] {
		return this.providers().filter((provider) => this.models.get(provider)?.has(id));
	}
}

/** Split `provider/id` at the first slash: model ids may themselves contain slashes. */
export function parseModelRef(ref: string): { provider: string; id: string } {
	const slash = ref.indexOf("/");
	if (slash <= 0 || slash === ref.length - 1) {
		throw new UserError(
			`"${ref}" is not a model reference.`,
			"Write it as provider/id, e.g. --model anthropic/claude-sonnet-4-5 or --model ollama/qwen2.5-coder:14b.",
			ExitCode.usage,
		);
	}
	return { provider: ref.slice(0, slash), id: ref.slice(slash + 1) };
}

function applyOverride(model: Model<Api>, override: CustomProviderConfig): Model<Api> {
	return {
		...model,
		baseUrl: override.baseUrl ?? model.baseUrl,
		headers: override.headers ? { ...model.headers, ...override.headers } : model.headers,
	};
}
