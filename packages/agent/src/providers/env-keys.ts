import { findEnvKeys, getEnvApiKey } from "@mariozechner/pi-ai";

/** Where a provider's credentials come from in the environment, as pi-ai reads them. */
export interface ProviderEnvironment {
	/** Variables holding a key, in pi-ai's order of preference. */
	keys: readonly string[];
	/**
	 * For providers signed in without a key variable (Amazon Bedrock's AWS credentials): the
	 * variables pi-ai looks at. Empty for providers that take a key, and for OAuth-only ones.
	 */
	ambient: readonly string[];
}

const known = new Map<string, ProviderEnvironment>();

/**
 * The environment variables pi-ai reads for `provider`. pi-ai keeps that table to itself and only
 * reads `process.env`: it is asked with an environment in which every variable is set, and the
 * names it reports (or reads) are its own data, so new providers and changed names follow pi-ai.
 */
export function providerEnvironment(provider: string): ProviderEnvironment {
	const cached = known.get(provider);
	if (cached) return cached;
	const keys = withVariables(new Set(), () => findEnvKeys(provider)).result ?? [];
	// Only when there is no key variable: the ambient probe may cache file checks inside pi-ai.
	const environment = { keys, ambient: keys.length > 0 ? [] : ambientVariables(provider) };
	known.set(provider, environment);
	return environment;
}

/** The variable a user should set for `provider` (the last, plainest name), if it takes a key. */
export function keyVariableFor(provider: string): string | undefined {
	const keys = providerEnvironment(provider).keys;
	return keys[keys.length - 1];
}

/**
 * The variables pi-ai looks at to sign in to `provider` without a key. Its checks stop at the
 * first variable set (`AWS_PROFILE || ...`), so each probe leaves the names seen so far unset
 * and goes on until no check passes.
 */
function ambientVariables(provider: string): string[] {
	const unset = new Set<string>();
	for (let probe = 0; probe < 20; probe++) {
		const { result, read } = withVariables(unset, () => getEnvApiKey(provider));
		const before = unset.size;
		for (const name of read) unset.add(name);
		if (!result || unset.size === before) break;
	}
	return [...unset];
}

/**
 * Run `read` (synchronous) while `process.env` answers every name except those in `unset` with a
 * value; report the names read, in order.
 */
function withVariables<T>(unset: ReadonlySet<string>, read: () => T): { result: T; read: string[] } {
	const names: string[] = [];
	const real = process.env;
	process.env = new Proxy({} as NodeJS.ProcessEnv, {
		get: (_target, name) => {
			if (typeof name !== "string") return undefined;
			if (!names.includes(name)) names.push(name);
			return unset.has(name) ? undefined : "set";
		},
	});
	try {
		return { result: read(), read: names };
	} finally {
		process.env = real;
	}
}
