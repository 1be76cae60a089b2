import { escapeControls } from "../outcome/index.js";
import { BoundedText, displayLine } from "./output.js";
import type { RecoveryContext, RecoveryHints, RecoveryLimits, RecoveryResponse } from "./types.js";

/** Exact lines of one observation, numbered, within the line and byte caps; says how to page on. */
export async function readObservation(
	context: RecoveryContext,
	request: { id: string; startLine?: number; endLine?: number },
	limits: RecoveryLimits,
	hints: RecoveryHints,
): Promise<RecoveryResponse> {
	const { id } = request;
	const record = await context.archive.get(id);
	const start = request.startLine ?? 1;
	const askedEnd = request.endLine ?? start + Math.min(limits.readMaxLines, record.lines) - 1;
	const end = Math.min(askedEnd, start + limits.readMaxLines - 1);
	const firstPage = Math.min(limits.readMaxLines, 80);
	if (record.lines === 0) {
		return {
			action: "read",
			text: `${id} is empty (0 lines, ${record.bytes} bytes).`,
			isError: false,
			evidence: false,
			truncated: false,
		};
	}
	if (start > record.lines) {
		// No such lines: an error (the CLI exits 1), with the read of the last page that exists.
		const last = hints.read(id, Math.max(1, record.lines - firstPage + 1), record.lines);
		const text = `Error: ${id} has ${record.lines} lines; startLine ${start} is past the end. Try: ${last}`;
		return { action: "read", text, isError: true, evidence: false, truncated: false };
	}
	// Clipped and bounded at the source, so even pages of giant lines cost little memory.
	const { lines, lineBytes } = await context.archive.readLines(id, start, Math.max(start, end), {
		maxLineBytes: limits.readLineMaxBytes + 4,
		maxBytes: limits.responseMaxBytes + limits.readLineMaxBytes,
	});
	const out = new BoundedText(limits.responseMaxBytes);
	const binary = record.binary
		? "; binary: not valid UTF-8, invalid bytes shown as U+FFFD, control bytes as \\xNN"
		: "";
	out.add(`${id} (tool=${record.tool}, ${record.bytes} bytes, ${record.lines} lines${binary}) from line ${start}:`);
	let last = start - 1;
	let cutLine = false;
	for (const [index, raw] of lines.entries()) {
		const text = record.binary ? escapeControls(raw) : raw;
		const number = start + index;
		const prefix = `${number}: `;
		// A line longer than the room left is shown cut (with its size) if it is the first line;
		// otherwise it starts the next page.
		const room = Math.min(limits.readLineMaxBytes, out.room() - prefix.length);
		const full = record.binary ? undefined : lineBytes?.[index];
		const shown = displayLine(text, index === 0 ? Math.max(room, 64) : limits.readLineMaxBytes, undefined, full);
		if (!out.add(`${prefix}${shown}`)) break;
		if (shown !== text || (full !== undefined && full > Buffer.byteLength(text))) cutLine = true;
		last = number;
	}
	// The next page is as long as this one was, so a page cut by bytes suggests a page that fits.
	const page = Math.max(1, last - start + 1);
	const notes: string[] = [];
	if (cutLine) notes.push("Long lines were cut; search for text inside them to see the part around a match.");
	if (last < Math.min(askedEnd, record.lines)) {
		const reason = out.cut
			? `Cut to fit ${limits.responseMaxBytes} bytes`
			: `At most ${limits.readMaxLines} lines per read`;
		notes.push(
			`${reason}; showed lines ${start}-${last} of ${record.lines}. Next: ${hints.read(id, last + 1, Math.min(record.lines, last + page))}`,
		);
	} else if (last >= record.lines) {
		notes.push(`[End of ${id}: line ${record.lines} is the last line.]`);
	} else {
		notes.push(
			`[${record.lines - last} more lines. Next: ${hints.read(id, last + 1, Math.min(record.lines, last + page))}]`,
		);
	}
	const note = notes.map((n) => (n.startsWith("[") ? n : `[${n}]`)).join("\n");
	return {
		action: "read",
		text: out.finish(note),
		isError: false,
		evidence: last >= start,
		truncated: out.cut || cutLine || last < Math.min(askedEnd, record.lines),
	};
}
