import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kernel } from "../kernel/index.js";
import {
	asArray,
	describeCell,
	ENTRY_ID,
	manifestFromPython,
	restoreReportFromPython,
	type SaveStateOptions,
	STATE_CAPS,
	type StateRestoreReport,
	type StateSaveReport,
	StateSnapshotError,
	stateManifestPath,
} from "./manifest.js";
import { pythonString, restoreOverChannel, saveOverChannel } from "./over-channel.js";

/**
 * Save the kernel's user namespace into `dir` (one dill file per variable plus `manifest.json`),
 * as a silent cell: no history, no execution count, nothing in `_` or `Out`. One object that
 * cannot be pickled loses only its own name; a crash mid-save leaves the previous snapshot whole.
 * A kernel on a Jupyter Server (maybe another machine) saves on its side and sends the files to
 * `dir` over the kernel channel; the snapshot of record is always the host's `dir`.
 */
export async function saveKernelState(
	kernel: Kernel,
	dir: string,
	options: SaveStateOptions = {},
): Promise<StateSaveReport> {
	const maxVariableBytes = Math.floor(options.maxVariableBytes ?? STATE_CAPS.variableBytes);
	const maxTotalBytes = Math.floor(options.maxTotalBytes ?? STATE_CAPS.totalBytes);
	if (options.entry !== undefined) stateManifestPath(dir, options.entry);
	if (kernel.location.kind !== "local") {
		return saveOverChannel(kernel, dir, options.exclude ?? [], {
			maxVariableBytes,
			maxTotalBytes,
			...(options.entry !== undefined ? { entry: options.entry } : {}),
			...(options.maxHistoryBytes !== undefined ? { maxHistoryBytes: Math.floor(options.maxHistoryBytes) } : {}),
			...(options.maxHistoryEntries !== undefined ? { maxHistoryEntries: Math.floor(options.maxHistoryEntries) } : {}),
		});
	}
	const args = [
		pythonString(dir),
		`[${(options.exclude ?? []).map(pythonString).join(", ")}]`,
		`max_variable_bytes=${maxVariableBytes}`,
		`max_total_bytes=${maxTotalBytes}`,
	];
	if (options.entry !== undefined) args.push(`entry=${pythonString(options.entry)}`);
	if (options.maxHistoryBytes !== undefined) args.push(`max_history_bytes=${Math.floor(options.maxHistoryBytes)}`);
	if (options.maxHistoryEntries !== undefined)
		args.push(`max_history_entries=${Math.floor(options.maxHistoryEntries)}`);
	const raw = await runStateCell(kernel, `save(${args.join(", ")})`, "save");
	return {
		...manifestFromPython(raw),
		written: Number(raw.written ?? 0),
		prunedEntries: asArray(raw.pruned_entries).map(String),
		durationMs: Number(raw.duration_ms ?? 0),
	};
}

/**
 * Load the snapshot in `dir` (the latest save, or the one kept for `entry`) into the kernel's
 * namespace (imports, then cell-defined classes and functions, then the other values). A missing
 * or corrupt snapshot is reported, never thrown: the kernel then simply starts empty. Run it
 * before injecting live handles, so those win. A kernel on a Jupyter Server pulls the files from
 * `dir` over the kernel channel.
 */
export async function restoreKernelState(kernel: Kernel, dir: string, entry?: string): Promise<StateRestoreReport> {
	if (kernel.location.kind !== "local") {
		if (entry !== undefined && !ENTRY_ID.test(entry)) {
			return { restored: [], imports: [], failed: [], unsaveable: [], corrupt: `not a session entry id: '${entry}'` };
		}
		return restoreOverChannel(kernel, dir, entry);
	}
	const call = entry === undefined ? pythonString(dir) : `${pythonString(dir)}, entry=${pythonString(entry)}`;
	const raw = await runStateCell(kernel, `restore(${call})`, "restore");
	return restoreReportFromPython(raw);
}

async function runStateCell(kernel: Kernel, call: string, what: string): Promise<Record<string, unknown>> {
	// The kernel writes its report to a new private file: stdout is capped, and a report may be long.
	const reportPath = join(tmpdir(), `prime-kernel-state-${process.pid}-${randomBytes(8).toString("hex")}.json`);
	// One expression, so the cell binds no name of its own in the namespace being saved.
	const code = `(lambda state: state.write_report(state.${call}, ${pythonString(reportPath)}))(__import__("prime_kernel.state", fromlist=["state"]))`;
	try {
		const cell = await kernel.execute(code, { silent: true });
		if (cell.status !== "ok") throw new StateSnapshotError(`The kernel state ${what} failed: ${describeCell(cell)}.`);
		return JSON.parse(readFileSync(reportPath, "utf8")) as Record<string, unknown>;
	} finally {
		rmSync(reportPath, { force: true });
	}
}
