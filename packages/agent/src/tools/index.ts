/** The model's tools: exactly one, `ipython`. */
export * from "./ipython/index.js";
export {
	IPYTHON_TOOL_NAME,
	REMOVED_TOOL_NAMES,
	rejectRemovedTools,
	TOOL_NAMES,
	unknownToolText,
	validateToolNames,
} from "./removed-tools.js";
