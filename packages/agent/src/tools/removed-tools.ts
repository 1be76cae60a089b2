import { ExitCode, UserError } from "../errors.js";

/** The model's only tool. */
export const IPYTHON_TOOL_NAME = "ipython";
export const TOOL_NAMES: readonly string[] = [IPYTHON_TOOL_NAME];

/** Tools other coding agents have that this one replaced with Python in `ipython`. */
export const REMOVED_TOOL_NAMES: readonly string[] = ["read", "write", "grep", "find", "ls", "bash", "edit"];

const INSTEAD =
	'the model reads, writes, searches and edits files with Python, and runs commands in %%bash cells, all inside its one tool, "ipython"';

/**
 * Check tool names given on the command line (`--tools a,b`) against the tools there are (the
 * session's and its extensions'): a removed built-in is pointed to `ipython` (`rejectRemovedTools`),
 * an unknown name is rejected rather than ignored. Returns the names to keep.
 */
export function validateToolNames(names: readonly string[], available: readonly string[] = TOOL_NAMES): string[] {
	const wanted = rejectRemovedTools(names);
	const unknown = wanted.filter((name) => !available.includes(name));
	if (unknown.length > 0) {
		throw new UserError(
			`Unknown tool${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`,
			`The tools are ${quoted(available)}; name only those in --tools.`,
			ExitCode.usage,
		);
	}
	if (wanted.length === 0) {
		throw new UserError("--tools names no tool.", `Name at least one of ${quoted(available)}.`, ExitCode.usage);
	}
	return wanted;
}

/**
 * The first check of `--tools`, before anything loads: a removed built-in (`bash`, `read`, ...)
 * gets a message saying what to do instead. Returns the names, trimmed.
 */
export function rejectRemovedTools(names: readonly string[]): string[] {
	const wanted = names.map((name) => name.trim()).filter((name) => name !== "");
	const removed = wanted.filter((name) => REMOVED_TOOL_NAMES.includes(name));
	if (removed.length > 0) {
		const list = removed.map((name) => `"${name}"`).join(", ");
		throw new UserError(
			`The built-in tool${removed.length > 1 ? "s" : ""} ${list} no longer exist${removed.length > 1 ? "" : "s"}: ${INSTEAD}.`,
			`Drop ${list} from --tools (the model's own tool is "${IPYTHON_TOOL_NAME}").`,
			ExitCode.usage,
		);
	}
	return wanted;
}

function quoted(names: readonly string[]): string {
	return names.map((name) => `"${name}"`).join(", ");
}

/**
 * What the model reads after calling a tool that does not exist. The loop answers such a call with
 * a bare "Tool bash not found"; a model trained on other agents' tools needs to hear where the
 * capability went (a removed built-in) or which tools there are.
 */
export function unknownToolText(name: string, available: readonly string[]): string {
	if (REMOVED_TOOL_NAMES.includes(name)) {
		return `There is no "${name}" tool: ${INSTEAD}. Call "ipython" with Python code, or with a cell whose first line is %%bash for shell commands.`;
	}
	return `There is no "${name}" tool. The tools are: ${quoted(available)}.`;
}
