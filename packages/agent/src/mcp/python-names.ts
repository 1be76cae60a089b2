/** Python's keywords: a module or attribute so named could not be written in an `import` or after a dot. */
const PYTHON_KEYWORDS = new Set(
	"False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(
		" ",
	),
);

/**
 * The Python name of a server or tool name: letters, digits and `_`, never starting with a digit,
 * and a keyword with a `_` after it (`import` is `import_`).
 */
export function moduleName(name: string): string {
	const safe = name.replace(/[^A-Za-z0-9_]/g, "_");
	if (PYTHON_KEYWORDS.has(safe)) return `${safe}_`;
	return /^[0-9]/.test(safe) ? `_${safe}` : safe;
}

/**
 * The Python name of each of a server's tools, one per tool and never two alike, whatever order
 * the server lists them in: a tool whose name is already its Python name keeps it (`get_file`),
 * then the others, sorted by name, take theirs or, when it is taken, the first free of `_2`, `_3`,
 * … after it (`get-file` is `get_file_2`). So no Python name is another tool's MCP name either,
 * and a call by either name reaches one tool.
 */
export function pythonToolNames(names: readonly string[]): Map<string, string> {
	const result = new Map<string, string>();
	const taken = new Set<string>();
	for (const name of names) {
		if (moduleName(name) !== name) continue;
		result.set(name, name);
		taken.add(name);
	}
	for (const name of [...names].filter((entry) => !result.has(entry)).sort(compareCodePoints)) {
		const base = moduleName(name);
		let candidate = base;
		for (let suffix = 2; taken.has(candidate); suffix++) candidate = `${base}_${suffix}`;
		result.set(name, candidate);
		taken.add(candidate);
	}
	return result;
}

/** Sorting by code point, the same on every machine (`localeCompare` follows the locale). */
function compareCodePoints(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}
