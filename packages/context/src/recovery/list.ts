import type { ObservationRecord } from "../types.js";
import { BoundedText } from "./output.js";
import type { RecoveryContext, RecoveryHints, RecoveryLimits, RecoveryResponse } from "./types.js";

/** One line per observation: id, tool, source, size, status, time and command. Never bodies. */
export function describeRecord(record: ObservationRecord): string {
	const status = record.isError || (record.exitCode !== null && record.exitCode !== 0) ? "error" : "ok";
	const parts = [
		record.id,
		`tool=${record.tool}`,
		`source=${record.source}`,
		`${record.bytes} bytes`,
		`${record.lines} lines`,
		record.exitCode !== null ? `exit=${record.exitCode}` : "",
		status,
		record.binary ? "binary" : "",
		record.decision,
		record.archivedAt,
		record.command
			? `command=${JSON.stringify(record.command.length > 200 ? `${record.command.slice(0, 200)}…` : record.command)}`
			: "",
	];
	return parts.filter(Boolean).join("  ");
}

export async function listObservations(
	context: RecoveryContext,
	limit: number | undefined,
	limits: RecoveryLimits,
	hints: RecoveryHints,
): Promise<RecoveryResponse> {
	const wanted = Math.min(limit ?? limits.listMax, limits.listMax);
	const records = await context.archive.list(wanted + 1);
	const more = records.length > wanted;
	const shown = records.slice(0, wanted);
	if (shown.length === 0) {
		return {
			action: "list",
			text: `No archived observations in session ${context.sessionId}.`,
			isError: false,
			evidence: false,
			truncated: false,
		};
	}
	const out = new BoundedText(limits.responseMaxBytes);
	out.add(`Observations in session ${context.sessionId}, newest first (${shown.length}${more ? "+" : ""}):`);
	let count = 0;
	for (const record of shown) {
		if (!out.add(describeRecord(record))) break;
		count++;
	}
	let note: string | undefined;
	if (out.cut)
		note = `[Cut to ${count} entries to fit ${limits.responseMaxBytes} bytes; ask for fewer: ${hints.list(count)}]`;
	else if (more && wanted < limits.listMax) note = `[More observations exist: ${hints.list(limits.listMax)}]`;
	else if (more) note = `[Older observations exist beyond the newest ${wanted}.]`;
	return { action: "list", text: out.finish(note), isError: false, evidence: true, truncated: out.cut };
}
