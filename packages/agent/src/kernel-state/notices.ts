import type { StateManifest, StateRestoreReport, UnsaveableVariable } from "prime-agent-kernel";

const LIST_LIMIT = 40;

/**
 * The one-time note for the first cell after a restore: which names came back, which did not and
 * why. `undefined` when there was nothing to restore.
 */
export function restoreNotice(report: StateRestoreReport): string | undefined {
	if (report.corrupt) {
		return `[The saved kernel state could not be read (${report.corrupt}), so this kernel started empty: define again what you need.]`;
	}
	if (report.missing) return undefined;
	const parts: string[] = [];
	const back = report.restored.length + report.imports.length;
	if (back > 0) {
		const names = [...report.imports, ...report.restored];
		parts.push(`${back} name${back === 1 ? "" : "s"} came back from the saved state: ${list(names)}.`);
	} else {
		parts.push("No variable came back from the saved state.");
	}
	const lost = [
		...report.failed.map((failure) => `${failure.name} (could not be restored: ${failure.reason})`),
		...report.unsaveable.map((variable) => `${variable.name} (${unsaveableText(variable)})`),
	];
	if (lost.length > 0) parts.push(`Not restored, define again if needed: ${list(lost, "; ")}.`);
	return `[Kernel state restored from this session's earlier run. ${parts.join(" ")}]`;
}

/** The note for a resumed session whose snapshot will be restored when its kernel starts. */
export function resumeNote(manifest: StateManifest): string {
	const names = [...Object.keys(manifest.imports), ...manifest.variables.map((variable) => variable.name)];
	return (
		"[This session continues in a new IPython kernel. The state saved after earlier cells is restored when it " +
		`starts, before your first cell runs: ${names.length > 0 ? list(names) : "no saved names"}. ` +
		"The first cell's result says which names came back.]"
	);
}

/** The note for a resumed session whose snapshot cannot be read. */
export function unreadableStateNote(reason: string): string {
	return `[This session continues in a new IPython kernel and its saved state could not be read (${reason}): variables, imports and functions from earlier cells are gone. Define again what you need.]`;
}

function unsaveableText(variable: UnsaveableVariable): string {
	const what = variable.type ? `a ${variable.type}` : "it";
	return `${what} could not be saved: ${variable.reason}`;
}

function list(items: string[], separator = ", "): string {
	if (items.length <= LIST_LIMIT) return items.join(separator);
	return `${items.slice(0, LIST_LIMIT).join(separator)}${separator}and ${items.length - LIST_LIMIT} more`;
}
