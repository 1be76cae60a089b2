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

/**
 * An error as shown: `evalue` capped like a stream, each traceback line capped at a quarter of
 * `cap`, and the traceback cut to its first and last lines when still longer than `cap` (the end
 * is where the exception is). The whole error goes to the complete-output file.
 */
export function capError(error: CellError, cap: number): { error: CellError; truncated: boolean } {
	const marker = (omitted: number) => `[... ${omitted} chars truncated ...]`;
	const evalue = capText(error.evalue, cap, marker(error.evalue.length - cap));
	let truncated = evalue.truncated;
	const lineCap = Math.floor(cap / 4);
	let lines = error.traceback.map((line) => {
		if (line.length <= lineCap) return line;
		truncated = true;
		return capText(line, lineCap, marker(line.length - lineCap)).text;
	});
	const total = lines.reduce((sum, line) => sum + line.length + 1, 0);
	if (total > cap) {
		truncated = true;
		const head: string[] = [];
		const tail: string[] = [];
		let used = 0;
		for (let i = 0, j = lines.length - 1; i <= j; ) {
			const takeTail = tail.length <= head.length;
			const line = takeTail ? lines[j] : lines[i];
			if (used + line.length + 1 > cap) break;
			used += line.length + 1;
			if (takeTail) {
				tail.unshift(line);
				j--;
			} else {
				head.push(line);
				i++;
			}
		}
		lines = [...head, `[... ${lines.length - head.length - tail.length} traceback lines truncated ...]`, ...tail];
	}
	return { error: { ename: error.ename, evalue: evalue.text, traceback: lines }, truncated };
}
