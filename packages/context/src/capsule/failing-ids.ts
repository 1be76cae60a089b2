/** Separators that end one part of a test id and begin the next (`a::b`, `a.b`, `a > b`, `a › b`, `a/b`, `a b`). */
const SEPARATOR = /::|\.|\s›\s|\s>\s|\/|\s/g;

/** Every proper suffix of an id that starts right after a separator, in literal and `::`-as-`.` forms. */
function suffixesOf(id: string): string[] {
	const out: string[] = [];
	for (const form of id.includes("::") ? [id, id.replace(/::/g, ".")] : [id]) {
		for (const match of form.matchAll(SEPARATOR)) {
			const rest = form.slice(match.index + match[0].length);
			if (rest.length > 0) out.push(rest);
		}
	}
	return out;
}

/**
 * The failing ids without shorter aliases of ids also listed: `TestA.test_b` goes when
 * `tests/test_a.py::TestA::test_b` is there, `should parse` when `parser should parse` is. A
 * dropped alias names the same test, so no failing test is lost. First-seen order is kept.
 */
export function compactFailingIds(ids: readonly string[]): string[] {
	const unique = [...new Set(ids)];
	const covered = new Set<string>();
	for (const id of unique) for (const suffix of suffixesOf(id)) covered.add(suffix);
	return unique.filter((id) => !covered.has(id));
}
