import type { CellError } from "../types.js";

/** The parts of a cell's output, in the order they are shown. */
export interface CellOutputParts {
	stdout: string;
	stderr: string;
	result?: string;
	error?: CellError;
}

/** The text shown for an error: its traceback lines, or `ename: evalue` when there is none. */
export function errorText(error: CellError | undefined): string {
	if (!error) return "";
	if (error.traceback.length > 0) return error.traceback.join("\n");
	return error.evalue ? `${error.ename}: ${error.evalue}` : error.ename;
}

/**
 * One text for a cell: stdout, then stderr, then the execution result, then the traceback.
 * Empty parts are left out; a part that does not end with a newline gets one before the next
 * part, and nothing else is added or changed. Tracebacks are kept as the kernel sent them (the
 * kernel is started with plain, uncoloured tracebacks, so they hold no ANSI codes).
 */
export function formatCellOutput(parts: CellOutputParts): string {
	const sections = [parts.stdout, parts.stderr, parts.result ?? "", errorText(parts.error)].filter((s) => s.length > 0);
	return sections
		.map((section, i) => (i < sections.length - 1 && !section.endsWith("\n") ? `${section}\n` : section))
		.join("");
}

/** `text` cut to `cap` characters (never inside a surrogate pair) and ended with `marker` on its own line. */
export function capText(text: string, cap: number, marker: string): { text: string; truncated: boolean } {
	if (text.length <= cap) return { text, truncated: false };
	let head = text.slice(0, cap);
	const last = head.charCodeAt(head.length - 1);
	if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
	return { text: `${head}${head.endsWith("\n") ? "" : "\n"}${marker}`, truncated: true };
}
