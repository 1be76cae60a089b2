import { isDigitCode, isSpaceCode } from "./chars.js";
import type { ScanState } from "./state.js";

const PYTHON_FRAME = /File "([^"]+)", line (\d+)/;
const PAREN_POSITION = /^\s*([^\s()][^()]*?)\((\d+),(\d+)\): /;
const HAS_EXTENSION = /[^/\\]\.[A-Za-z][\w]{0,9}$/;
/**
 * A Java frame of a class in a named module: the JDK's (`at java.base/java.util.ArrayList.forEach(...)`)
 * or a modular library's, never the project's classpath code (`at app//demo.Calc.div(...)`, `at demo.Calc.div(...)`).
 */
const JAVA_MODULE_FRAME = /^\s*at [\w.-]+(?:@[\w.-]+)?\/(?:[\w$]+\.)+[\w$<>]+\(/;
/** maven-compiler-plugin's javac position: `[ERROR] /src/main/java/demo/Calc.java:[3,53] ';' expected`. */
const BRACKET_POSITION = /(?:^|[\s(])([^\s:()[\]]+):\[(\d+),(\d+)\]/;

/** A character of a `path` in `path:line`: anything but space and ``:'"()[]<>,;``. */
function isPathCode(code: number): boolean {
	switch (code) {
		case 58: // :
		case 39: // '
		case 34: // "
		case 40: // (
		case 41: // )
		case 91: // [
		case 93: // ]
		case 60: // <
		case 62: // >
		case 44: // ,
		case 59: // ;
			return false;
		default:
			return !isSpaceCode(code);
	}
}

/** What may stand just before a path: start of line, space, ``(['"<@``. */
function isPathDelimiter(code: number): boolean {
	return code === 40 || code === 91 || code === 39 || code === 34 || code === 60 || code === 64 || isSpaceCode(code);
}

/** End of the run of ASCII digits starting at `from`. */
function digitsEnd(text: string, from: number): number {
	let at = from;
	while (isDigitCode(text.charCodeAt(at))) at++;
	return at;
}

/**
 * Where the path of a `path:line` whose colon is at `colon` starts, or -1: the leftmost start the
 * pattern `(?:^|[\s(['"<@])((?:file:\/\/)?[^\s:'"()[\]<>,;]+):(\d+)` would take, searching from `from`
 * (a start needs its delimiter at or after `from`; the line start only when `from` is 0).
 */
function pathStart(text: string, colon: number, from: number): number {
	let run = colon;
	while (run > 0 && isPathCode(text.charCodeAt(run - 1))) run--;
	if (run === colon) return -1;
	const startsAt = (at: number) => (at === 0 ? from === 0 : at - 1 >= from && isPathDelimiter(text.charCodeAt(at - 1)));
	// `file://` then the path: its colon ends the run, so the prefix lies just before it.
	if (run >= 5 && colon - run > 2 && text.startsWith("file://", run - 5) && startsAt(run - 5)) return run - 5;
	if (startsAt(run)) return run;
	// Inside the run only `@` both belongs to a path and may stand before one.
	for (let at = Math.max(run, from) + 1; at < colon; at++) {
		if (text.charCodeAt(at - 1) === 64) return at;
	}
	return -1;
}

/**
 * Reports every source location a line names (Python frames, `file(3,7)`, `file:[3,7]`, `path:line[:col]`). A
 * `path:line` is found from its colon: only a colon followed by a digit costs a look back over its
 * path, so a line costs one pass whatever it holds.
 */
export function scanLocations(text: string, lineNo: number, state: ScanState): void {
	if (text.length < 4) return;
	if (text.includes('File "')) {
		const frame = PYTHON_FRAME.exec(text);
		if (frame) state.addLocation(frame[1], Number(frame[2]), undefined, lineNo);
	}
	// Every other shape holds a colon: half of all lines hold none, and stop here.
	let colon = text.indexOf(":");
	if (colon === -1) return;
	if (text.includes("): ", colon - 1)) {
		const paren = PAREN_POSITION.exec(text);
		if (paren && HAS_EXTENSION.test(paren[1])) {
			state.addLocation(paren[1].trim(), Number(paren[2]), Number(paren[3]), lineNo);
		}
	}
	if (text.includes(":[", colon)) {
		const bracket = BRACKET_POSITION.exec(text);
		if (bracket && HAS_EXTENSION.test(bracket[1])) {
			state.addLocation(bracket[1], Number(bracket[2]), Number(bracket[3]), lineNo);
		}
	}
	// Whether the line is a Java frame in a named module, asked once a location is found.
	let library: boolean | undefined;
	let found = 0;
	// Like a global pattern's `lastIndex`: a match ends where the next search starts.
	let from = 0;
	while (colon !== -1) {
		const start = isDigitCode(text.charCodeAt(colon + 1)) ? pathStart(text, colon, from) : -1;
		if (start < 0) {
			colon = text.indexOf(":", colon + 1);
			continue;
		}
		const lineEnd = digitsEnd(text, colon + 1);
		let end = lineEnd;
		let column: number | undefined;
		if (text.charCodeAt(lineEnd) === 58 && isDigitCode(text.charCodeAt(lineEnd + 1))) {
			end = digitsEnd(text, lineEnd + 1);
			column = Number(text.slice(lineEnd + 1, end));
		}
		const file = text.slice(start, colon);
		if (HAS_EXTENSION.test(file)) {
			library ??= text.includes("/") && JAVA_MODULE_FRAME.test(text);
			state.addLocation(file, Number(text.slice(colon + 1, lineEnd)), column, lineNo, library);
			if (++found >= 8) return;
		}
		from = end;
		colon = text.indexOf(":", end);
	}
}
