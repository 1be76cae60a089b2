import type { StateManifest, StateRestoreReport, UnsaveableVariable } from "prime-agent-kernel";

const LIST_LIMIT = 40;

/** Where a restored snapshot came from, as the notice names it. */
export const RESUMED_FROM = "this session's earlier run";

/**
 * The one-time note for the first cell after a restore: which names came back, which did not and
 * why. `from` says which snapshot it was. `undefined` when there was nothing to restore.
 */
export function restoreNotice(report: StateRestoreReport, from = RESUMED_FROM): string | undefined {
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
	return `[Kernel state restored from ${from}. ${parts.join(" ")}]`;
}

/**
 * Which point of the conversation a restored snapshot belongs to. `cell` counts the cells of the
 * branch up to the one the snapshot follows; `cellsAfter` the cells between it and the branch
 * point (they failed, or their snapshot was not kept). Absent for a snapshot of an older
 * prime-agent, which only knew its last run's end.
 */
export interface SnapshotPoint {
	entry: string;
	cell: number;
	cellsAfter: number;
}

/** The note for a resumed session whose snapshot will be restored when its kernel starts. */
export function resumeNote(manifest: StateManifest, point?: SnapshotPoint): string {
	const names = [...Object.keys(manifest.imports), ...manifest.variables.map((variable) => variable.name)];
	return (
		`[This session continues in a new IPython kernel. ${point ? pointText(point) : "The state saved at the end of its last run"} is restored when it ` +
		`starts, before your first cell runs: ${names.length > 0 ? list(names) : "no saved names"}. ` +
		"The first cell's result says which names came back.]"
	);
}

function pointText(point: SnapshotPoint): string {
	const saved = `The state saved after cell ${point.cell} of this conversation (entry ${point.entry})`;
	if (point.cellsAfter === 0) return `${saved}, its last cell,`;
	const later = point.cellsAfter === 1 ? "1 later cell" : `${point.cellsAfter} later cells`;
	return `${saved}, not after the ${later} (they failed or their state was not kept, so what they changed is missing),`;
}

/**
 * The note for a session continued from a point no kept snapshot belongs to: the kernel starts
 * empty rather than with the state of another point or branch.
 */
export function noSnapshotHereNote(): string {
	return "[This session continues in a new, empty IPython kernel: the kernel state saved for this session belongs to a later point or another branch, and none was kept for this point, so variables, imports and functions from earlier cells are not defined. Define again what you need.]";
}

/** The notice of the first cell after a restart that got the last snapshot back. */
export function restartRestoredFrom(): string {
	return "the snapshot saved after the last successful cell before the restart (what the cell that stopped the kernel changed is lost)";
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
