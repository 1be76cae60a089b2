const VARYING = /0x[0-9a-f]+|\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b|(?:[A-Za-z]:)?(?:[\w.@~+-]*[/\\])+[\w.@~+-]*|\d+|\s+/gi;

function normalise(part: string): string {
	const first = part.charCodeAt(0);
	if (first === 32 || first === 9 || first === 10 || first === 13 || first === 12 || first === 11) return " ";
	if (part.includes("/") || part.includes("\\")) return "/P";
	if (/^\d+$/.test(part)) return "0";
	return "#";
}

/**
 * The shape of a line: what stays when the parts that vary between otherwise repeated lines are
 * normalised (hex ids and addresses, file paths, numbers, surrounding space). Lines of one shape
 * are shown once in an excerpt, with a count.
 */
export function lineShape(text: string): string {
	return text.trim().slice(0, 240).replace(VARYING, normalise);
}
