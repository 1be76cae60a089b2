import { ExitCode, UserError } from "../errors.js";

/** The model's only tool. */
export const IPYTHON_TOOL_NAME = "ipython";
export const TOOL_NAMES: readonly string[] = [IPYTHON_TOOL_NAME];

/** Tools other coding agents have that this one replaced with Python in `ipython`. */
export const REMOVED_TOOL_NAMES: readonly string[] = ["read", "write", "grep", "find", "ls", "bash", "edit"];

/**
 * Check tool names given on the command line (`--tools a,b`). A removed built-in gets a message
 * saying what to do instead; an unknown name is rejected rather than ignored.
 */
export function validateToolNames(names: readonly string[]): string[] {
	const wanted = names.map((name) => name.trim()).filter((name) => name !== "");
	const removed = wanted.filter((name) => REMOVED_TOOL_NAMES.includes(name));
	if (removed.length > 0) {
		const list = removed.map((name) => `"${name}"`).join(", ");
		throw new UserError(
			`The built-in tool${removed.length > 1 ? "s" : ""} ${list} no longer exist${removed.length > 1 ? "" : "s"}: the model reads, writes, searches and edits files with Python, and runs commands in %%bash cells, all inside its one tool, "ipython".`,
			`Drop ${list} from --tools (the only tool is "ipython").`,
			ExitCode.usage,
		);
	}
	const unknown = wanted.filter((name) => !TOOL_NAMES.includes(name));
	if (unknown.length > 0) {
		throw new UserError(
			`Unknown tool${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`,
			`The only tool is "ipython"; remove the others from --tools.`,
			ExitCode.usage,
		);
	}
	return wanted;
}
