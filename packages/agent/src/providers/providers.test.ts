import { describe, expect, it } from "vitest";
import { findCredential, LOCAL_SERVER_KEY, requireCredential } from "./credentials.js";
import { chooseDefaultModel, resolveModelRef } from "./default-model.js";
import { keyVariableFor, providerEnvironment } from "./env-keys.js";
import { ModelRegistry, parseModelRef } from "./registry.js";

const local = {
	providers: {
		ollama: { baseUrl: "http://127.0.0.1:11434/v1", models: [{ id: "qwen2.5-coder:14b", contextWindow: 32768 }] },
		anthropic: { baseUrl: "https://proxy.example" },
	},
};

describe("models", () => {
	it("splits provider/id at the first slash, so ids may contain slashes", () => {
		expect(parseModelRef("openrouter/anthropic/claude-sonnet-4.5")).toEqual({
			provider: "openrouter",
			id: "anthropic/claude-sonnet-4.5",
		});
		expect(new ModelRegistry().resolve("openrouter/anthropic/claude-sonnet-4.5").provider).toBe("openrouter");
	});

	it("adds models.json servers and moves a built-in provider to a new base URL", () => {
		const registry = new ModelRegistry(local);
		expect(registry.resolve("ollama/qwen2.5-coder:14b")).toMatchObject({
			api: "openai-completions",
			baseUrl: "http://127.0.0.1:11434/v1",
			contextWindow: 32768,
		});
		expect(registry.resolve("anthropic/claude-sonnet-4-5").baseUrl).toBe("https://proxy.example");
	});

	it("a bare id picks the one provider offering it that has a key, and names the candidates otherwise", () => {
		const registry = new ModelRegistry();
		expect(resolveModelRef(registry, {}, "claude-sonnet-4-5", { ANTHROPIC_API_KEY: "k" }).provider).toBe("anthropic");
		expect(() => resolveModelRef(registry, {}, "claude-sonnet-4-5", {})).toThrow(/Several providers offer/);
	});

	it("without --model, takes settings first, then the first well-known provider with a key", () => {
		const registry = new ModelRegistry();
		expect(chooseDefaultModel(registry, {}, undefined, { OPENAI_API_KEY: "k" }).provider).toBe("openai");
		expect(chooseDefaultModel(registry, {}, "google/gemini-2.5-pro", { OPENAI_API_KEY: "k" }).id).toBe(
			"gemini-2.5-pro",
		);
		expect(() => chooseDefaultModel(registry, {}, undefined, {})).toThrow(/No model selected/);
	});
});

describe("credentials", () => {
	it("prefers models.json, then auth.json, then the environment", () => {
		const env = { OPENAI_API_KEY: "from-env" };
		expect(findCredential("openai", {}, undefined, env)).toEqual({ key: "from-env", source: "$OPENAI_API_KEY" });
		expect(findCredential("openai", { openai: { type: "api_key", key: "from-auth" } }, undefined, env)?.key).toBe(
			"from-auth",
		);
		expect(findCredential("openai", { openai: "from-auth" }, { apiKey: "from-models" }, env)?.key).toBe("from-models");
	});

	it("a local server without a key needs none; a named variable that is unset is an error naming it", () => {
		expect(findCredential("ollama", {}, local.providers.ollama, {})?.key).toBe(LOCAL_SERVER_KEY);
		expect(() =>
			requireCredential(
				"vllm",
				{},
				{ baseUrl: "http://x", apiKeyEnv: "VLLM_KEY", models: [{ id: "m" }] },
				"/h/auth.json",
				{},
			),
		).toThrow(/\$VLLM_KEY, which is not set/);
	});

	it("OAuth entries in auth.json get a clear message instead of a silent miss", () => {
		expect(() =>
			requireCredential("anthropic", { anthropic: { type: "oauth" } }, undefined, "/h/auth.json", {}),
		).toThrow(/"oauth" credentials for "anthropic"/);
	});
});

describe("key hints from pi-ai's own provider data", () => {
	const missing = (provider: string) => {
		try {
			requireCredential(provider, {}, undefined, "/home/auth.json", {});
		} catch (error) {
			return `${(error as Error).message} | ${(error as { hint: string }).hint}`;
		}
		return "no error";
	};

	it("names the variable pi-ai reads, for providers an old table did not know too", () => {
		expect(providerEnvironment("openai")).toEqual({ keys: ["OPENAI_API_KEY"], ambient: [] });
		expect(keyVariableFor("anthropic")).toBe("ANTHROPIC_API_KEY");
		expect(keyVariableFor("xiaomi-token-plan-cn")).toBe("XIAOMI_TOKEN_PLAN_CN_API_KEY");
		expect(missing("xiaomi-token-plan-cn")).toContain("export XIAOMI_TOKEN_PLAN_CN_API_KEY=<key>");
		// What pi-ai reads is also where a key is found.
		expect(findCredential("xiaomi-token-plan-cn", {}, undefined, { XIAOMI_TOKEN_PLAN_CN_API_KEY: "k" })?.key).toBe("k");
	});

	it("Bedrock is told about its cloud credentials, and a login-only provider is not told to export a key", () => {
		expect(missing("amazon-bedrock")).toBe(
			'No credentials for provider "amazon-bedrock": it signs in with its cloud\'s own credentials, and none are set. | Set them in the environment (pi-ai reads AWS_PROFILE, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, AWS_CONTAINER_CREDENTIALS_FULL_URI, AWS_WEB_IDENTITY_TOKEN_FILE), or add {"amazon-bedrock": {"type": "api_key", "key": "<key>"}} to /home/auth.json; then retry.',
		);
		const codex = missing("openai-codex");
		expect(codex).toContain("signs in through its own login");
		expect(codex).not.toContain("export ");
	});
});

describe("--model typos", () => {
	const hint = (ref: string) => {
		try {
			resolveModelRef(new ModelRegistry(), {}, ref, {});
		} catch (error) {
			return (error as { hint: string }).hint;
		}
		return "resolved";
	};

	it("suggest the close provider, model, or provider/id of a bare id", () => {
		expect(hint("antropic/claude-sonnet-4-5")).toMatch(/^Did you mean anthropic\/claude-sonnet-4-5\?/);
		expect(hint("anthropic/claude-sonet-4-5")).toMatch(/^Did you mean anthropic\/claude-sonnet-4-5, /);
		expect(hint("claude-sonet-4-5")).toMatch(/^Did you mean anthropic\/claude-sonnet-4-5, /);
		expect(hint("openai/gpt-5-mnii")).toMatch(/^Did you mean openai\/gpt-5-mini, /);
	});
});
