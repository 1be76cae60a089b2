import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Credentials, findCredential, LOCAL_SERVER_KEY, requireCredential } from "./credentials.js";
import { chooseDefaultModel, resolveModelRef } from "./default-model.js";
import { keyVariableFor, providerEnvironment } from "./env-keys.js";
import { ModelRegistry, parseModelRef } from "./registry.js";

/** The keys a run with this environment (and no auth.json, no models.json providers) has. */
const keys = (env: NodeJS.ProcessEnv) =>
	new Credentials({ models: { providers: {} }, auth: {}, authPath: "/h/auth.json", env });

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
		expect(resolveModelRef(registry, keys({ ANTHROPIC_API_KEY: "k" }), "claude-sonnet-4-5").provider).toBe("anthropic");
		expect(() => resolveModelRef(registry, keys({}), "claude-sonnet-4-5")).toThrow(/Several providers offer/);
	});

	it("without --model, takes settings first, then the first well-known provider with a key", () => {
		const registry = new ModelRegistry();
		expect(chooseDefaultModel(registry, keys({ OPENAI_API_KEY: "k" }), undefined).provider).toBe("openai");
		expect(chooseDefaultModel(registry, keys({ OPENAI_API_KEY: "k" }), "google/gemini-2.5-pro").id).toBe(
			"gemini-2.5-pro",
		);
		expect(() => chooseDefaultModel(registry, keys({}), undefined)).toThrow(/No model selected/);
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

	it("Credentials reads auth.json once and answers for every provider from models.json, auth.json and the environment", () => {
		const home = mkdtempSync(join(tmpdir(), "prime-credentials-"));
		try {
			const authPath = join(home, "auth.json");
			writeFileSync(authPath, JSON.stringify({ openai: { type: "api_key", key: "from-auth" } }));
			const credentials = Credentials.load(local, authPath, { GEMINI_API_KEY: "from-env" });
			// The file is read once: what it says later is not this run's.
			rmSync(authPath);
			expect(credentials.find("openai")).toEqual({ key: "from-auth", source: "auth.json" });
			expect(credentials.find("google")).toEqual({ key: "from-env", source: "$GEMINI_API_KEY" });
			expect(credentials.find("ollama")).toEqual({ key: LOCAL_SERVER_KEY, source: "no key needed" });
			expect(credentials.has("mistral")).toBe(false);
			const missing = (() => {
				try {
					credentials.require("mistral");
				} catch (error) {
					return error as { message: string; hint: string };
				}
			})();
			expect(missing?.message).toBe('No API key for provider "mistral".');
			expect(missing?.hint).toBe(
				`export MISTRAL_API_KEY=<key>, or add {"mistral": {"type": "api_key", "key": "<key>"}} to ${authPath}; then retry.`,
			);
		} finally {
			rmSync(home, { recursive: true, force: true });
		}
	});

	it("Credentials.load refuses an auth.json that is not an object keyed by provider, naming the file", () => {
		const home = mkdtempSync(join(tmpdir(), "prime-credentials-"));
		try {
			const authPath = join(home, "auth.json");
			writeFileSync(authPath, "[]");
			expect(() => Credentials.load(local, authPath, {})).toThrow(
				`${authPath} must hold a JSON object keyed by provider.`,
			);
		} finally {
			rmSync(home, { recursive: true, force: true });
		}
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
			resolveModelRef(new ModelRegistry(), keys({}), ref);
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
