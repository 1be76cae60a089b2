import type { ScanState } from "./state.js";

/** A qualified class name whose last part is capitalised: `ValueError`, `tomli._parser.TOMLDecodeError`. */
const TYPE_NAME = "(?:[a-z_][\\w]*\\.)*[A-Z][\\w]*";
/** Names that read as exceptions without a traceback around them. */
const EXCEPTION_SUFFIX = /(?:Error|Exception|Interrupt|Exit|Failure)$/;

/** `Type: message`, optionally with a Node error code: `TypeError [ERR_X]: message`. */
const TYPED_MESSAGE = new RegExp(`^(${TYPE_NAME})( \\[[A-Z][A-Z0-9_]*\\])?: (.*)$`);
/** A bare type on its own line: `KeyboardInterrupt`. */
const BARE_TYPE = new RegExp(`^(${TYPE_NAME})$`);

export interface ExceptionLine {
	type: string;
	message: string;
}

/**
 * An exception stated by a diagnostic line: `Type: message` or a bare type alone on its line.
 * Source code that names a class (`except ValueError:`, `raise ValueError(`, `assertRaises(KeyError)`)
 * never matches: the type must open the line and be followed by `: ` or nothing.
 * `anyName` accepts any capitalised class name (inside a traceback); otherwise the name must look like
 * an exception (`...Error`, `...Exception`, `...Interrupt`, `...Exit`, `...Failure`).
 */
export function exceptionOf(trimmed: string, anyName: boolean): ExceptionLine | null {
	const first = trimmed.charCodeAt(0);
	// A type starts with a letter or `_`; most lines are rejected here.
	if (!((first >= 65 && first <= 90) || (first >= 97 && first <= 122) || first === 95)) return null;
	const spaced = trimmed.includes(" ");
	const typed = spaced && trimmed.includes(": ") ? TYPED_MESSAGE.exec(trimmed) : null;
	if (typed) {
		const name = typed[1];
		if (!anyName && !EXCEPTION_SUFFIX.test(name)) return null;
		return { type: typed[2] ? `${name}${typed[2]}` : name, message: typed[3] };
	}
	const bare = spaced ? null : BARE_TYPE.exec(trimmed);
	if (bare && (anyName || EXCEPTION_SUFFIX.test(bare[1])) && !/Warning$/.test(bare[1])) {
		return { type: bare[1], message: "" };
	}
	return null;
}

const PYTHON_FRAME = /File "([^"]+)", line (\d+)/;
const PAREN_POSITION = /^\s*([^\s()][^()]*?)\((\d+),(\d+)\): /;
/**
 * `path.ext:line[:col]` after a delimiter. The path part cannot contain `:` or spaces, so a failed match
 * costs one pass over the token: linear on any line.
 */
const PATH_POSITION = /(?:^|[\s(['"<@])((?:file:\/\/)?[^\s:'"()[\]<>,;]+):(\d+)(?::(\d+))?/g;
const DIGIT_AFTER_COLON = /:\d/;
const HAS_EXTENSION = /[^/\\]\.[A-Za-z][\w]{0,9}$/;

/** Reports every source location a line names (Python frames, `file(3,7)`, `path:line[:col]`). */
export function scanLocations(text: string, lineNo: number, state: ScanState): void {
	if (text.length < 4) return;
	if (text.includes('File "')) {
		const frame = PYTHON_FRAME.exec(text);
		if (frame) state.addLocation(frame[1], Number(frame[2]), undefined, lineNo);
	}
	if (text.includes("): ")) {
		const paren = PAREN_POSITION.exec(text);
		if (paren && HAS_EXTENSION.test(paren[1])) {
			state.addLocation(paren[1].trim(), Number(paren[2]), Number(paren[3]), lineNo);
		}
	}
	if (!DIGIT_AFTER_COLON.test(text)) return;
	let found = 0;
	PATH_POSITION.lastIndex = 0;
	for (let match = PATH_POSITION.exec(text); match !== null; match = PATH_POSITION.exec(text)) {
		if (!HAS_EXTENSION.test(match[1])) continue;
		state.addLocation(match[1], Number(match[2]), match[3] === undefined ? undefined : Number(match[3]), lineNo);
		if (++found >= 8) break;
	}
}
