/**
 * The shape of a line: what stays when the parts that vary between otherwise repeated lines are
 * normalised (hex ids and addresses, file paths, numbers, surrounding space). Lines of one shape
 * are shown once in an excerpt, with a count.
 */
export function lineShape(text: string): string {
	return text
		.trim()
		.slice(0, 240)
		.replace(/\b0x[0-9a-f]+\b/gi, "#")
		.replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b/gi, "#")
		.replace(/(?:[A-Za-z]:)?(?:[\w.@~+-]*[/\\])+[\w.@~+-]*/g, "/P")
		.replace(/\d+/g, "0")
		.replace(/\s+/g, " ");
}
