/**
 * Providers and models: pi-ai's catalogue plus models.json, and where each provider's key comes from.
 */
export {
	type AuthFile,
	type CredentialSource,
	Credentials,
	findCredential,
	LOCAL_SERVER_KEY,
	loadAuthFile,
	requireCredential,
} from "./credentials.js";
export { chooseDefaultModel, DEFAULT_MODELS, resolveModelRef } from "./default-model.js";
export { keyVariableFor, type ProviderEnvironment, providerEnvironment } from "./env-keys.js";
export {
	type CustomModelConfig,
	type CustomProviderConfig,
	DEFAULT_CONTEXT_WINDOW,
	DEFAULT_MAX_TOKENS,
	loadModelsFile,
	type ModelsFile,
} from "./models-file.js";
export { describeOutputRefusal, type OutputRefusal, parseOutputRefusal } from "./output-refusal.js";
export { ModelRegistry, parseModelRef } from "./registry.js";
