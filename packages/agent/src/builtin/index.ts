/**
 * Extensions that ship with the agent, keyed by display name. The session loads them after every
 * discovered extension, so what they see is final; each is written against the public extension
 * API only, and each has its own switch in its own configuration.
 */
import type { ExtensionFactory } from "../extensions/api.js";
import type { ProjectTrust } from "../trust/index.js";
import mcpExtension, { MCP_EXTENSION_NAME } from "./mcp/index.js";
import primeContextExtension, { PRIME_CONTEXT_EXTENSION_NAME } from "./prime-context/index.js";

/** The built-in extensions of a session; `trust` decides which of the project's MCP servers start. */
export function builtinExtensions(trust: ProjectTrust): Readonly<Record<string, ExtensionFactory>> {
	return {
		[PRIME_CONTEXT_EXTENSION_NAME]: primeContextExtension,
		[MCP_EXTENSION_NAME]: (api) => mcpExtension(api, trust),
	};
}
