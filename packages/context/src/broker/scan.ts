import { TextCheck } from "../archive/text-check.js";
import type { ArchiveWriter } from "../archive/types.js";
import { DEFAULT_SELECTOR_LIMITS, LineSelector, type Selection } from "../capsule/index.js";
import { createOutcomeScanner, type ShapedLines } from "../outcome/index.js";
import type { ObservationInput, ObservationSource, Outcome } from "../types.js";
import { type SelectedLines, SelectionPass } from "./selection-pass.js";
import { type SelectionJob, selectionJob, THREAD_MIN_BYTES } from "./selection-thread.js";
import { BODY_MAX_BYTES, LineSplitter, type ObservationSourceStream } from "./source.js";

/** Everything one pass over an observation learns, in bounded memory. */
export interface Scan {
	source: ObservationSource;
	bytes: number;
	lines: number;
	/** Not exact text: some byte is NUL or not valid UTF-8 (exact comparisons then use bytes only). */
	binary: boolean;
	/** Mostly not text: shown as a binary capsule. A few odd bytes in a log do not make it binary. */
	mostlyBinary: boolean;
	/** The exact bytes are kept (at most `BODY_MAX_BYTES` of them): `body()` is not null. */
	hasBody: boolean;
	/**
	 * The exact bytes, when kept. Joined on the first call: most observations are never compared
	 * with an earlier one, and need no copy of themselves (ask `hasBody` first).
	 */
	body(): Buffer | null;
	/** The kept bytes as text (null when not kept or not exact text), decoded at most once. */
	text(): string | null;
	outcome: Outcome;
	selection: Selection;
	/** Set when writing to the archive failed; scanning went on regardless. */
	archiveError?: string;
}

function describe(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/**
 * Selects the lines again, in place, from a second read of the source (its job on the selection
 * thread failed), which must give the `bytes` of the first: a complete-output file replaced, removed
 * or changed meanwhile fails the scan, as a file failing mid-read does (the broker then observes the
 * visible text), rather than pair one read's outcome with another's lines.
 */
async function selectInPlace(
	stream: ObservationSourceStream,
	copyKept: boolean,
	bytes: number,
): Promise<SelectedLines> {
	const changed = () => new Error("the complete-output file changed while it was observed");
	if (stream.unchanged && !(await stream.unchanged())) throw changed();
	const pass = new SelectionPass(copyKept);
	let read = 0;
	for await (const chunk of stream.chunks()) {
		pass.push(chunk);
		read += chunk.length;
	}
	if (read !== bytes || (stream.unchanged && !(await stream.unchanged()))) throw changed();
	return pass.finish();
}

/**
 * Reads the source once: every chunk goes to the archive writer (exact bytes) and, split into
 * lines, to the outcome scanner and the line selector. A large source's lines are selected on the
 * selection thread meanwhile, from copies of the chunks (`selection-thread.ts`); if that fails,
 * they are selected again here. A failed archive write stops archiving, never the scan.
 */
export async function scanObservation(
	stream: ObservationSourceStream,
	input: ObservationInput,
	writer: ArchiveWriter | null,
): Promise<Scan> {
	const copyKept = !stream.heldInMemory;
	const scanner = createOutcomeScanner({ copyKept });
	const job: SelectionJob | null = stream.sizeHint >= THREAD_MIN_BYTES ? selectionJob(copyKept) : null;
	// In place, the selector classifies each line and hands its kind and its remembered note on the
	// text to the outcome scanner; on the thread, the scanner leaves classifying to it.
	const selector = job === null ? new LineSelector(DEFAULT_SELECTOR_LIMITS, copyKept) : null;
	const splitter = new LineSplitter(
		selector === null
			? (text, lineNo) => scanner.line(text, lineNo, null)
			: (text, lineNo, bytes) => {
					const kind = selector.line(text, lineNo, bytes);
					scanner.line(text, lineNo, kind, selector.memo);
				},
	);
	const check = new TextCheck();
	let body: Buffer[] | null = [];
	let bytes = 0;
	let archiveError: string | undefined;
	let lines: number;
	let binary: boolean;
	try {
		for await (const chunk of stream.chunks()) {
			if (job !== null) {
				const behind = job.push(chunk);
				if (behind !== null) await behind;
			}
			if (writer && archiveError === undefined) {
				try {
					await writer.write(chunk);
				} catch (error) {
					archiveError = describe(error);
				}
			}
			bytes += chunk.length;
			check.push(chunk);
			splitter.push(chunk);
			if (body !== null) {
				// Sources hand out a fresh buffer per chunk and never change it: no copy is needed.
				if (bytes <= BODY_MAX_BYTES) body.push(chunk);
				else body = null;
			}
		}
		lines = splitter.end();
		binary = check.end();
	} catch (error) {
		// A job neither finished nor cancelled would keep the thread, and the process, waiting.
		job?.cancel();
		throw error;
	}
	let selection: Selection;
	let shaped: ShapedLines | undefined;
	if (selector !== null) selection = selector.finish();
	else {
		const selected = await (job as SelectionJob).finish().catch(() => selectInPlace(stream, copyKept, bytes));
		selection = selected.selection;
		shaped = selected.shaped;
	}
	const outcome = scanner.finish(
		{
			tool: input.tool,
			command: input.command,
			exitCode: input.exitCode,
			isError: input.isError,
		},
		shaped,
	);
	const parts = body;
	let joined: Buffer | null | undefined;
	let decoded: string | null | undefined;
	const bodyOf = (): Buffer | null => {
		if (joined === undefined) joined = parts === null ? null : Buffer.concat(parts);
		return joined;
	};
	return {
		source: stream.source,
		bytes,
		lines,
		binary,
		mostlyBinary: check.mostlyNotText(),
		hasBody: parts !== null,
		body: bodyOf,
		text() {
			if (decoded !== undefined) return decoded;
			if (parts === null || binary) decoded = null;
			else decoded = stream.decoded?.() ?? (bodyOf() as Buffer).toString("utf8");
			return decoded;
		},
		outcome,
		selection,
		archiveError,
	};
}
