import type { SessionKernel } from "../tools/index.js";

export const IPYTHON_STATE_TYPE = "ipython_state";

const MARK = "<<prime-kernel-names>>";

/**
 * One silent-in-effect cell listing the user's names: no underscore names, nothing IPython or the
 * runtime injected. Everything happens inside one expression, so the cell defines nothing.
 */
const LIST_NAMES_CODE = `print(${JSON.stringify(MARK)} + __import__("json").dumps([[k, type(v).__name__] for k, v in list(get_ipython().user_ns.items()) if not k.startswith("_") and k not in get_ipython().user_ns_hidden and k not in ("In", "Out", "exit", "quit", "get_ipython") and k not in getattr(__import__("sys").modules.get("prime_agent_runtime.namespace"), "INJECTED_NAMES", ("edit", "asyncio", "compact"))]))`;

/** A name defined in the kernel and the type of its value. */
export interface KernelName {
	name: string;
	type: string;
}

/** What the listing found. */
export interface KernelListing {
	/** Undefined when the kernel could not answer. */
	names?: KernelName[];
	/**
	 * A one-time notice the kernel had for the model's next cell (it was restarted, or restored
	 * from a snapshot); the listing cell received it, so it must reach the model with the state.
	 */
	notice?: string;
}

/**
 * The names the model defined in the kernel, or undefined when the kernel never started (nothing
 * to list). Runs one cell, so call it only between turns.
 */
export async function listKernelNames(kernel: SessionKernel): Promise<KernelListing | undefined> {
	if (!kernel.started || kernel.busy) return undefined;
	try {
		const run = await kernel.run(LIST_NAMES_CODE);
		const line = run.cell.stdout.split("\n").find((text) => text.startsWith(MARK));
		if (run.cell.status !== "ok" || !line) return { notice: run.resetNotice };
		const pairs = JSON.parse(line.slice(MARK.length)) as [string, string][];
		const names = pairs.map(([name, type]) => ({ name, type })).sort((a, b) => a.name.localeCompare(b.name));
		return { names, notice: run.resetNotice };
	} catch {
		return {};
	}
}

/** The hidden message after a compaction: the kernel persisted, and these names are still defined. */
export function ipythonStateMessage(listing: KernelListing): string {
	const names = listing.names;
	const lines = ["<ipython_state>"];
	if (listing.notice) lines.push(listing.notice);
	else lines.push("The conversation above was compacted, but the IPython kernel persisted: nothing was reset.");
	if (names === undefined) {
		lines.push("Its names could not be listed; check with `print(dir())` before defining anything again.");
	} else if (names.length === 0) {
		lines.push("No names of yours are defined in it yet.");
	} else {
		lines.push("These names are still defined; use them directly and do not redefine or re-read them:");
		lines.push(names.map((entry) => `${entry.name} (${entry.type})`).join(", "));
	}
	lines.push("</ipython_state>");
	return lines.join("\n");
}
