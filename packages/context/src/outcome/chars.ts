/** Character tests on UTF-16 code units, for the per-line rules that look at one character at a time. */

export const isDigitCode = (code: number): boolean => code >= 48 && code <= 57;

export const isUpperCode = (code: number): boolean => code >= 65 && code <= 90;

/** JavaScript's `\s`: what may not appear in a path token, and what may stand before one. */
export function isSpaceCode(code: number): boolean {
	if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
	if (code < 0xa0) return false;
	return (
		code === 0xa0 ||
		code === 0x1680 ||
		(code >= 0x2000 && code <= 0x200a) ||
		code === 0x2028 ||
		code === 0x2029 ||
		code === 0x202f ||
		code === 0x205f ||
		code === 0x3000 ||
		code === 0xfeff
	);
}
