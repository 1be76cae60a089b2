/**
 * A cell magic only counts on the first line, and models often start a cell with a blank line:
 * drop leading blank lines when the first real line is a cell magic such as `%%bash`.
 */
export function normalizeCellCode(code: string): string {
	const trimmed = code.replace(/^(?:[ \t]*\r?\n)+/, "");
	return trimmed.startsWith("%%") ? trimmed : code;
}
