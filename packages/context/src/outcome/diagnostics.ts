/**
 * A qualified class name whose last part is capitalised: `ValueError`, `tomli._parser.TOMLDecodeError`,
 * a nested class `mod.Outer.InnerError`, a class defined in a function `mod.test_x.<locals>.LocalError`.
 */
const TYPE_NAME = "(?:(?:[A-Za-z_][\\w]*|<locals>)\\.)*[A-Z][\\w]*";
/** Names that read as exceptions without a traceback around them. */
const EXCEPTION_SUFFIX = /(?:Error|Exception|Interrupt|Exit|Failure)$/;

/**
 * `Type: message`, optionally with Node's tag: a code (`TypeError [ERR_X]: message`) or the name of the
 * class it was thrown as (`TypeError [Error]: message`, node's test runner).
 */
const TYPED_MESSAGE = new RegExp(`^(${TYPE_NAME})( \\[[A-Z]\\w*\\])?: (.*)$`);
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
	const space = trimmed.indexOf(" ");
	const spaced = space >= 0;
	// The type holds no space, so a `Type: message` line has its `: ` at the first space, or right after
	// a ` [CODE]` that the first space opens: no search of the rest of the line.
	const colonAtSpace = trimmed.charCodeAt(space - 1) === 58 || trimmed.charCodeAt(space + 1) === 91;
	const typed = spaced && colonAtSpace ? TYPED_MESSAGE.exec(trimmed) : null;
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
