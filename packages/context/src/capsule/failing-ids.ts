import { isSpaceCode } from "../outcome/chars.js";

/**
 * The length of the separator at `at` (0: none) that ends one part of a test id and begins the next:
 * `::`, `.`, ` › `, ` > `, `/` or a space, tried in that order, as the pattern
 * `/::|\.|\s›\s|\s>\s|\/|\s/g` would match there.
 */
function separatorAt(text: string, at: number): number {
	const code = text.charCodeAt(at);
	if (code === 58 /* : */) return text.charCodeAt(at + 1) === 58 ? 2 : 0;
	if (code === 46 /* . */ || code === 47 /* / */) return 1;
	if (!isSpaceCode(code)) return 0;
	const next = text.charCodeAt(at + 1);
	return (next === 0x203a /* › */ || next === 62) /* > */ && isSpaceCode(text.charCodeAt(at + 2)) ? 3 : 1;
}

/**
 * The length, first and last character of `text.slice(from)` in one number: equal slices have equal
 * sketches (a filter only: the slices themselves are compared after it).
 */
function sketchOf(text: string, from: number): number {
	return ((text.length - from) * 0x10000 + text.charCodeAt(from)) * 0x10000 + text.charCodeAt(text.length - 1);
}

/**
 * The failing ids without shorter aliases of ids also listed: `TestA.test_b` goes when
 * `tests/test_a.py::TestA::test_b` is there, `should parse` when `parser should parse` is. An alias
 * is a proper suffix of a listed id that starts right after a separator, in the id's literal or
 * `::`-as-`.` form. A dropped alias names the same test, so no failing test is lost. First-seen
 * order is kept.
 *
 * Suffixes are found by one walk over each id, and only those that could be a listed id (the same
 * length, first and last character: `sketchOf`) are cut out and remembered.
 */
export function compactFailingIds(ids: readonly string[]): string[] {
	const unique = [...new Set(ids)];
	const sketches = new Set(unique.map((id) => sketchOf(id, 0)));
	const covered = new Set<string>();
	const coverSuffixes = (form: string) => {
		let at = 0;
		while (at < form.length) {
			const separator = separatorAt(form, at);
			if (separator === 0) {
				at++;
				continue;
			}
			at += separator;
			if (at < form.length && sketches.has(sketchOf(form, at))) covered.add(form.slice(at));
		}
	};
	for (const id of unique) {
		coverSuffixes(id);
		if (id.includes("::")) coverSuffixes(id.replaceAll("::", "."));
	}
	return unique.filter((id) => !covered.has(id));
}
