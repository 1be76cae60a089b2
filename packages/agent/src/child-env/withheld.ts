import { getProviders } from "@mariozechner/pi-ai";
import { type ModelsFile, providerEnvironment } from "../providers/index.js";

/** A name ending so holds a secret by convention, whatever program reads it (any case). */
const SECRET_ENDING = /(^|_)(API_KEY|TOKEN|SECRET|PASSWORD)$/i;
/**
 * Among a provider's ambient sign-in variables (AWS's): one with a credential word in its name
 * holds a credential (`AWS_SECRET_ACCESS_KEY`, `AWS_ACCESS_KEY_ID`, `AWS_BEARER_TOKEN_BEDROCK`)
 * unless its name ends in where one is kept (`AWS_WEB_IDENTITY_TOKEN_FILE`); the others name a
 * profile or an endpoint (`AWS_PROFILE`) and stay.
 */
const CREDENTIAL_WORD = /(^|_)(KEY|SECRET|TOKEN|PASSWORD)(_|$)/i;
const LOCATION_ENDING = /_(FILE|PATH|URI|URL)$/i;

/**
 * The environment of a process that runs code the agent does not control: the kernel (so `%%bash`,
 * `!cmd` and the subprocesses of the model's code), autonomous gates, a skill's import check. The
 * host keeps every variable (it calls the model); these processes start without the keys.
 */
export interface ChildEnvironment {
	/** The host's environment without the withheld variables. */
	env: Record<string, string>;
	/** The names left out, sorted (names only: a value is never reported). */
	withheld: string[];
	/** The names the rule matched that `kernel.env.keep` passed through, sorted. */
	kept: string[];
}

/**
 * `hostEnv` without the secrets: every variable pi-ai reads a provider's key from (and the AWS
 * ones that hold a credential), each `apiKeyEnv` of models.json, and every name ending in
 * `_API_KEY`, `_TOKEN`, `_SECRET` or `_PASSWORD`; except the names listed in `keep`. The names in
 * `withhold` (the Jupyter Server token's variable) are withheld whatever their name and `keep` say.
 */
export function childEnvironment(
	hostEnv: NodeJS.ProcessEnv,
	options: { models?: ModelsFile; keep?: readonly string[]; withhold?: readonly string[] } = {},
): ChildEnvironment {
	const secret = providerSecretNames(options.models);
	const keep = new Set(options.keep ?? []);
	const always = new Set(options.withhold ?? []);
	const result: ChildEnvironment = { env: {}, withheld: [], kept: [] };
	for (const [name, value] of Object.entries(hostEnv)) {
		if (value === undefined) continue;
		if (always.has(name)) result.withheld.push(name);
		else if (!secret.has(name) && !SECRET_ENDING.test(name)) result.env[name] = value;
		else if (keep.has(name)) {
			result.env[name] = value;
			result.kept.push(name);
		} else result.withheld.push(name);
	}
	result.withheld.sort();
	result.kept.sort();
	return result;
}

/** The variables holding a model provider's credentials, as pi-ai and models.json name them. */
export function providerSecretNames(models?: ModelsFile): Set<string> {
	const names = new Set<string>();
	for (const provider of getProviders()) {
		const { keys, ambient } = providerEnvironment(provider);
		for (const name of keys) names.add(name);
		for (const name of ambient) if (CREDENTIAL_WORD.test(name) && !LOCATION_ENDING.test(name)) names.add(name);
	}
	for (const config of Object.values(models?.providers ?? {})) if (config.apiKeyEnv) names.add(config.apiKeyEnv);
	return names;
}
