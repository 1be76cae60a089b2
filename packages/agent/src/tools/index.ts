/** The model's tools: exactly one, `ipython`. */
export * from "./ipython/index.js";
export { IPYTHON_TOOL_NAME, REMOVED_TOOL_NAMES, TOOL_NAMES, validateToolNames } from "./removed-tools.js";
