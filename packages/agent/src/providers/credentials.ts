import { getEnvApiKey } from "@mariozechner/pi-ai";
import { ExitCode, UserError } from "../errors.js";
import { readJsonFile } from "../home/index.js";
import { keyVariableFor, providerEnvironment } from "./env-keys.js";
import type { CustomProviderConfig, ModelsFile } from "./models-file.js";

/**
 * auth.json: `{ "<provider>": { "type": "api_key", "key": "..." } }`. A bare string value is
 * accepted as a key too.
 */
export type AuthFile = Record<string, { type: "api_key"; key: string } | { type: string } | string>;

/** Local servers usually need no key, but OpenAI-compatible clients refuse an empty one. */
export const LOCAL_SERVER_KEY = "prime-agent-local";

export interface CredentialSource {
	key: string;
	/** Where the key came from, for `doctor` and error messages (never the key itself). */
	source: string;
}

export function loadAuthFile(path: string): AuthFile {
	const raw = readJsonFile(path);
	if (raw === undefined) return {};
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		throw new UserError(
			`${path} must hold a JSON object keyed by provider.`,
			`Write it as {"anthropic": {"type": "api_key", "key": "sk-..."}}.`,
		);
	}
	return raw as AuthFile;
}

/**
 * Where the keys of one run come from, read once: models.json's providers, auth.json (`authPath`,
 * named in the advice a missing key gets) and the environment. Says where a key was found, never
 * the key, for messages (see `CredentialSource`).
 */
export class Credentials {
	constructor(
		private readonly sources: {
			models: ModelsFile;
			auth: AuthFile;
			authPath: string;
			/** The run's environment; only `process.env` itself also offers a cloud's ambient credentials. */
			env: NodeJS.ProcessEnv;
		},
	) {}

	/** auth.json at `authPath` (a malformed one is a `UserError`), beside `models` and `env`. */
	static load(models: ModelsFile, authPath: string, env: NodeJS.ProcessEnv): Credentials {
		return new Credentials({ models, auth: loadAuthFile(authPath), authPath, env });
	}

	/** The key for `provider` (see `findCredential` for the order of places), or none. */
	find(provider: string): CredentialSource | undefined {
		const { models, auth, env } = this.sources;
		return findCredential(provider, auth, models.providers[provider], env);
	}

	has(provider: string): boolean {
		return this.find(provider) !== undefined;
	}

	/** The key for `provider`, or a `UserError` saying where to put one (see `requireCredential`). */
	require(provider: string): CredentialSource {
		const { models, auth, authPath, env } = this.sources;
		return requireCredential(provider, auth, models.providers[provider], authPath, env);
	}
}

/**
 * Find a key for `provider`: models.json (`apiKey`, `apiKeyEnv`), then auth.json, then the
 * provider's usual environment variables. A provider defined in models.json with no key at all
 * is taken to be a local server and gets a placeholder key.
 */
export function findCredential(
	provider: string,
	auth: AuthFile,
	custom: CustomProviderConfig | undefined,
	env: NodeJS.ProcessEnv = process.env,
): CredentialSource | undefined {
	if (custom?.apiKey) return { key: custom.apiKey, source: "models.json apiKey" };
	if (custom?.apiKeyEnv) {
		const value = env[custom.apiKeyEnv];
		return value ? { key: value, source: `$${custom.apiKeyEnv}` } : undefined;
	}
	const stored = auth[provider];
	if (typeof stored === "string" && stored) return { key: stored, source: "auth.json" };
	if (typeof stored === "object" && stored && stored.type === "api_key" && "key" in stored && stored.key) {
		return { key: stored.key, source: "auth.json" };
	}
	const fromEnv = envKey(provider, env);
	if (fromEnv) return fromEnv;
	if (custom?.models) return { key: LOCAL_SERVER_KEY, source: "no key needed" };
	return undefined;
}

/** Like `findCredential`, but a missing key is a user error saying where to put one. */
export function requireCredential(
	provider: string,
	auth: AuthFile,
	custom: CustomProviderConfig | undefined,
	authPath: string,
	env: NodeJS.ProcessEnv = process.env,
): CredentialSource {
	const found = findCredential(provider, auth, custom, env);
	if (found) return found;
	if (custom?.apiKeyEnv) {
		throw new UserError(
			`No API key for provider "${provider}": models.json names $${custom.apiKeyEnv}, which is not set.`,
			`Export ${custom.apiKeyEnv}=<key> and retry.`,
			ExitCode.missingCredentials,
		);
	}
	const stored = auth[provider];
	if (typeof stored === "object" && stored && stored.type !== "api_key") {
		throw new UserError(
			`${authPath} holds "${stored.type}" credentials for "${provider}", which prime-agent cannot use yet.`,
			`Replace them with {"type": "api_key", "key": "<key>"}${keyVariableFor(provider) ? ` or export ${keyVariableFor(provider)}` : ""}.`,
			ExitCode.missingCredentials,
		);
	}
	const variable = keyVariableFor(provider);
	if (variable) {
		throw new UserError(
			`No API key for provider "${provider}".`,
			`export ${variable}=<key>, or add {"${provider}": {"type": "api_key", "key": "<key>"}} to ${authPath}; then retry.`,
			ExitCode.missingCredentials,
		);
	}
	const { ambient } = providerEnvironment(provider);
	if (ambient.length > 0) {
		throw new UserError(
			`No credentials for provider "${provider}": it signs in with its cloud's own credentials, and none are set.`,
			`Set them in the environment (pi-ai reads ${ambient.join(", ")}), or add {"${provider}": {"type": "api_key", "key": "<key>"}} to ${authPath}; then retry.`,
			ExitCode.missingCredentials,
		);
	}
	throw new UserError(
		`No API key for provider "${provider}", and it takes none from the environment (it signs in through its own login, which prime-agent cannot do yet).`,
		`Add {"${provider}": {"type": "api_key", "key": "<key>"}} to ${authPath} if you have a key, or pick a provider that takes one (\`prime-agent doctor\` lists those with a key).`,
		ExitCode.missingCredentials,
	);
}

function envKey(provider: string, env: NodeJS.ProcessEnv): CredentialSource | undefined {
	for (const name of providerEnvironment(provider).keys) {
		if (env[name]) return { key: env[name] as string, source: `$${name}` };
	}
	// Ambient credentials (AWS profiles, Google ADC) are only visible through pi-ai itself.
	if (env === process.env) {
		const ambient = getEnvApiKey(provider);
		if (ambient) return { key: ambient, source: "ambient cloud credentials" };
	}
	return undefined;
}
