/**
 * What the processes running code the agent does not control (the kernel, gates, a skill's
 * import check) inherit from the host: everything but the keys.
 */
export { type ChildEnvironment, childEnvironment, providerSecretNames } from "./withheld.js";
