import { randomBytes } from "node:crypto";
import { join, sep } from "node:path";
import type { Kernel } from "../kernel/index.js";
import { RestoreSender, type SaveLimits, SaveReceiver } from "./folder-transfer.js";
import {
	describeCell,
	manifestFromPython,
	restoreReportFromPython,
	STATE_MANIFEST,
	type StateRestoreReport,
	type StateSaveReport,
	StateSnapshotError,
	stateManifestPath,
} from "./manifest.js";

/**
 * A save by a kernel that does not share the host's filesystem (a kernel on a Jupyter Server):
 * the kernel pickles into a private mirror folder on its machine and sends the host, over the
 * kernel channel, the variable files `dir` lacks and the manifest (`prime_kernel/state_transfer.py`);
 * the host installs them here, keeps the entry manifest and prunes its own history. `durationMs`
 * is the whole save, transfer included.
 */
export async function saveOverChannel(
	kernel: Kernel,
	dir: string,
	exclude: readonly string[],
	limits: SaveLimits,
): Promise<StateSaveReport> {
	const began = Date.now();
	const receiver = new SaveReceiver(dir, limits);
	const call = `save_to_host({transfer}, [${exclude.map(pythonString).join(", ")}], max_variable_bytes=${limits.maxVariableBytes}, max_total_bytes=${limits.maxTotalBytes})`;
	await runTransferCell(kernel, "save", call, (request) => receiver.answer(request));
	const committed = receiver.committed;
	if (!committed) throw new StateSnapshotError("The kernel state save ended without committing its manifest.");
	return {
		...manifestFromPython(committed.manifest),
		written: committed.written,
		prunedEntries: committed.prunedEntries,
		durationMs: Date.now() - began,
	};
}

/**
 * A restore into a kernel that does not share the host's filesystem: the kernel pulls the manifest
 * and the variable files its mirror lacks from `dir` over the kernel channel, checks them against
 * their checksums and loads them. The report names the host's files, not the mirror's.
 */
export async function restoreOverChannel(kernel: Kernel, dir: string, entry?: string): Promise<StateRestoreReport> {
	const sender = new RestoreSender(dir);
	const manifestName = entry === undefined ? STATE_MANIFEST : `entries/${entry}.json`;
	await runTransferCell(kernel, "restore", `restore_from_host({transfer}, ${pythonString(manifestName)})`, (request) =>
		sender.answer(request),
	);
	if (!sender.report) throw new StateSnapshotError("The kernel state restore ended without its report.");
	const report = restoreReportFromPython(sender.report);
	const mirror = sender.mirror;
	if (!mirror) return report;
	// The kernel's mirror is of no use to the reader: name the host's files instead.
	const here = (text: string) =>
		text
			.replaceAll(`${mirror}/${STATE_MANIFEST}`, stateManifestPath(dir, entry))
			.replaceAll(`${mirror}/vars/`, `${join(dir, "vars")}${sep}`);
	return {
		...report,
		failed: report.failed.map((failure) => ({ ...failure, reason: here(failure.reason) })),
		...(report.corrupt !== undefined ? { corrupt: here(report.corrupt) } : {}),
	};
}

/**
 * Runs one transfer cell: its requests go to `answer` under a host request type made for this
 * transfer alone (so a request of another cell, or after the end, finds no handler).
 */
async function runTransferCell(
	kernel: Kernel,
	what: "save" | "restore",
	call: string,
	answer: (request: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
	const transfer = `prime.state.${randomBytes(8).toString("hex")}`;
	const unregister = kernel.onHostRequest(transfer, (payload) => answer(payload));
	// One expression, so the cell binds no name of its own in the namespace being saved.
	const code = `await __import__("prime_kernel.state_transfer", fromlist=["state_transfer"]).${call.replace("{transfer}", pythonString(transfer))}`;
	try {
		const cell = await kernel.execute(code, { silent: true });
		if (cell.status !== "ok") throw new StateSnapshotError(`The kernel state ${what} failed: ${describeCell(cell)}.`);
	} finally {
		unregister();
	}
}

/** A Python string literal (JSON string syntax is valid Python for any text). */
export function pythonString(text: string): string {
	return JSON.stringify(text);
}
