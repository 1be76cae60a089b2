import type { SessionKernel } from "../tools/index.js";

export const IPYTHON_STATE_TYPE = "ipython_state";

const MARK = "<<prime-kernel-names>>";

/** Most names listed; a namespace with more is summarised by its count (the list must stay short). */
export const MAX_LISTED_NAMES = 200;

/**
 * One cell listing the user's names: no underscore names, nothing IPython, the runtime or an
 * extension injected (`injected`). Everything happens inside one expression, so the cell defines
 * nothing. Prints the total and the first names in sorted order, so the output stays small even
 * for a huge namespace.
 */
function listNamesCode(injected: readonly string[]): string {
	const skipped = JSON.stringify(["In", "Out", "exit", "quit", "get_ipython", ...injected]);
	return `print(${JSON.stringify(MARK)} + (lambda names: __import__("json").dumps({"total": len(names), "names": names[:${MAX_LISTED_NAMES}]}))(sorted([k, type(v).__name__] for k, v in list(get_ipython().user_ns.items()) if not k.startswith("_") and k not in get_ipython().user_ns_hidden and k not in ${skipped})))`;
}

/** A name defined in the kernel and the type of its value. */
export interface KernelName {
	name: string;
	type: string;
}

/** What the listing found. */
export interface KernelListing {
	/** Undefined when the kernel could not answer. At most `MAX_LISTED_NAMES`, in name order. */
	names?: KernelName[];
	/** How many names are defined (more than `names` holds when the namespace is large). */
	total?: number;
	/**
	 * A one-time notice the kernel had for the model's next cell (it was restarted, or restored
	 * from a snapshot); the listing cell received it, so it must reach the model with the state.
	 */
	notice?: string;
	/** Why the kernel restarted since the previous listing (each time): its names may have changed with it. */
	restarts?: string[];
}

/**
 * The names the model defined in the kernel, or undefined when the kernel never started (nothing
 * to list). Runs one cell, so call it only between turns.
 */
export async function listKernelNames(kernel: SessionKernel): Promise<KernelListing | undefined> {
	if (!kernel.started || kernel.busy) return undefined;
	const restarts = kernel.takeRestarts();
	const since = restarts.length > 0 ? { restarts } : {};
	try {
		const run = await kernel.run(listNamesCode(kernel.injectedNames));
		const line = run.cell.stdout.split("\n").find((text) => text.startsWith(MARK));
		if (run.cell.status !== "ok" || !line) return { notice: run.resetNotice, ...since };
		const listed = JSON.parse(line.slice(MARK.length)) as { total: number; names: [string, string][] };
		const names = listed.names.map(([name, type]) => ({ name, type }));
		return { names, total: listed.total, notice: run.resetNotice, ...since };
	} catch {
		return since;
	}
}

/** The first line of a state note after restarts the model already heard of, one by one, in its cells' results. */
function restartedText(reasons: string[]): string {
	const times = reasons.length === 1 ? "once" : `${reasons.length} times`;
	return `The conversation above was compacted. The IPython kernel restarted ${times} since the last state note (${reasons.join("; ")}): names defined before a restart are there only if its snapshot restored them.`;
}

/** The hidden message after a compaction: the kernel persisted, and these names are still defined. */
export function ipythonStateMessage(listing: KernelListing): string {
	const names = listing.names;
	const lines = ["<ipython_state>"];
	if (listing.notice) lines.push(listing.notice);
	else if (listing.restarts?.length) lines.push(restartedText(listing.restarts));
	else lines.push("The conversation above was compacted, but the IPython kernel persisted: nothing was reset.");
	if (names === undefined) {
		lines.push("Its names could not be listed; check with `print(dir())` before defining anything again.");
	} else if (names.length === 0) {
		lines.push("No names of yours are defined in it yet.");
	} else {
		lines.push("These names are still defined; use them directly and do not redefine or re-read them:");
		const more = (listing.total ?? names.length) - names.length;
		const list = names.map((entry) => `${entry.name} (${entry.type})`).join(", ");
		lines.push(more > 0 ? `${list}, and ${more.toLocaleString("en-US")} more (\`dir()\` lists them all)` : list);
	}
	lines.push("</ipython_state>");
	return lines.join("\n");
}
