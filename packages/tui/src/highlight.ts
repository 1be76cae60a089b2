import { style } from "./style.js";

const PYTHON_KEYWORDS = new Set(
	(
		"False None True and as assert async await break class continue def del elif else except finally for from " +
		"global if import in is lambda nonlocal not or pass raise return try while with yield match case"
	).split(" "),
);
const PYTHON_BUILTINS = new Set(
	"print len range open str int float list dict set tuple bool type isinstance enumerate zip map filter sorted sum min max any all repr super object Exception".split(
		" ",
	),
);

// One pass over the code: comments, strings (triple, single, prefixed), numbers, names, the rest.
const PYTHON_TOKEN =
	/(#[^\n]*)|((?:[rRbBuUfF]{0,2})(?:"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?))|(\b\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?j?\b)|(@?[A-Za-z_][A-Za-z0-9_]*)|(\s+|[^\sA-Za-z0-9_#'"]+|.)/gy;

/**
 * Colour Python (and `%%bash` cells, shown plain after their magic line) for a terminal. Styles
 * are reapplied on every line of a multi-line token, so each line stands on its own (pi-tui resets
 * styles at each line end).
 */
export function highlightCode(code: string, lang?: string): string {
	const language = (lang ?? "python").toLowerCase();
	if (language !== "python" && language !== "py" && language !== "ipython") return code;
	if (code.startsWith("%%")) {
		const newline = code.indexOf("\n");
		const magic = newline === -1 ? code : code.slice(0, newline);
		return style.magenta(magic) + (newline === -1 ? "" : code.slice(newline));
	}
	let out = "";
	let previous = "";
	PYTHON_TOKEN.lastIndex = 0;
	for (let match = PYTHON_TOKEN.exec(code); match; match = PYTHON_TOKEN.exec(code)) {
		const [token, comment, string, number, name] = match;
		if (comment) out += perLine(token, style.gray);
		else if (string) out += perLine(token, style.green);
		else if (number) out += style.yellow(token);
		else if (name) {
			if (name.startsWith("@")) out += style.magenta(token);
			else if (PYTHON_KEYWORDS.has(name)) out += style.magenta(token);
			else if (previous === "def" || previous === "class") out += style.blue(token);
			else if (PYTHON_BUILTINS.has(name)) out += style.cyan(token);
			else out += token;
			previous = name;
			continue;
		} else out += token;
		if (token.trim() !== "") previous = token;
		if (PYTHON_TOKEN.lastIndex >= code.length) break;
	}
	return out;
}

function perLine(text: string, paint: (text: string) => string): string {
	return text
		.split("\n")
		.map((line) => (line === "" ? line : paint(line)))
		.join("\n");
}
