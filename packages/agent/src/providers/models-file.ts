import type { Api, Model } from "@mariozechner/pi-ai";
import { UserError } from "../errors.js";
import { readJsonFile } from "../home/index.js";

/**
 * models.json: providers added or adjusted by the user.
 *
 * ```json
 * { "providers": { "ollama": { "baseUrl": "http://127.0.0.1:11434/v1", "api": "openai-completions",
 *     "models": [{ "id": "qwen2.5-coder:14b", "contextWindow": 32768 }] } } }
 * ```
 * A provider with `models` adds those models (any OpenAI-compatible server works with the default
 * `api`). A built-in provider listed without `models` keeps its catalogue but takes the new
 * `baseUrl`/`headers` (a proxy, a gateway).
 */
export interface ModelsFile {
	providers: Record<string, CustomProviderConfig>;
}

export interface CustomProviderConfig {
	baseUrl?: string;
	/** Wire protocol understood by pi-ai. Default `openai-completions`. */
	api?: Api;
	/** A literal key. Prefer `apiKeyEnv` so the key stays out of the file. */
	apiKey?: string;
	/** Name of the environment variable holding the key. */
	apiKeyEnv?: string;
	headers?: Record<string, string>;
	models?: CustomModelConfig[];
}

export interface CustomModelConfig {
	id: string;
	name?: string;
	contextWindow?: number;
	maxTokens?: number;
	reasoning?: boolean;
	input?: ("text" | "image")[];
	cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
	/** Compatibility switches passed through to pi-ai (see its `OpenAICompletionsCompat`). */
	compat?: Record<string, unknown>;
}

/** Defaults for a configured model that does not say. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;
export const DEFAULT_MAX_TOKENS = 16_384;

export function loadModelsFile(path: string): ModelsFile {
	const raw = readJsonFile(path);
	if (raw === undefined) return { providers: {} };
	const fail = (what: string): never => {
		throw new UserError(`${path}: ${what}.`, "See the models.json example in the prime-agent README and fix the file.");
	};
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) fail("must hold a JSON object");
	const providers = (raw as { providers?: unknown }).providers ?? {};
	if (typeof providers !== "object" || providers === null || Array.isArray(providers)) {
		fail(`"providers" must be an object keyed by provider name`);
	}
	for (const [name, value] of Object.entries(providers as Record<string, unknown>)) {
		if (typeof value !== "object" || value === null) fail(`provider "${name}" must be an object`);
		const config = value as CustomProviderConfig;
		for (const key of ["baseUrl", "api", "apiKey", "apiKeyEnv"] as const) {
			if (config[key] !== undefined && typeof config[key] !== "string") fail(`"${name}.${key}" must be a string`);
		}
		if (config.models !== undefined) {
			if (!Array.isArray(config.models)) fail(`"${name}.models" must be a list`);
			if (!config.baseUrl) fail(`provider "${name}" lists models but has no "baseUrl"`);
			for (const model of config.models ?? []) {
				if (typeof model?.id !== "string" || model.id === "") fail(`every model of "${name}" needs a string "id"`);
			}
		}
	}
	return { providers: providers as Record<string, CustomProviderConfig> };
}

/** Turn one configured model into a pi-ai model description. */
export function toModel(provider: string, config: CustomProviderConfig, model: CustomModelConfig): Model<Api> {
	return {
		id: model.id,
		name: model.name ?? model.id,
		api: config.api ?? "openai-completions",
		provider,
		baseUrl: config.baseUrl ?? "",
		reasoning: model.reasoning ?? false,
		input: model.input ?? ["text"],
		cost: model.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: model.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
		maxTokens: model.maxTokens ?? DEFAULT_MAX_TOKENS,
		headers: config.headers,
		compat: model.compat as Model<Api>["compat"],
	};
}
