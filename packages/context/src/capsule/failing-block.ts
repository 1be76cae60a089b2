import { capsuleLinesBytes, capsuleLineBytes as lineBytes } from "./escape.js";

/** Files named in the grouped rest at most; the others are counted on one line. */
const MAX_GROUPS = 20;

/** The file a test id names (`tests/a.py::T::t`, `src/a.test.ts > suite > t`), or null when it names none. */
export function fileOfId(id: string): string | null {
	const match = /^([^\s:>›()]+\.[A-Za-z0-9]{1,10})(?:::|\s|$)/.exec(id) ?? SPACED_FILE_ID.exec(id);
	return match ? match[1] : null;
}

/** A pytest id whose file's folders or name hold spaces: `my tests/test_a.py::t` (a folder is needed). */
const SPACED_FILE_ID = /^([^:>›()]*\/[^:>›()/]*?\.[A-Za-z0-9]{1,10})::/;

function groupLines(ids: readonly string[], unrecorded: number, recorded: number): string[] {
	const counts = new Map<string, number>();
	for (const id of ids) {
		const file = fileOfId(id) ?? "(no file in the id)";
		counts.set(file, (counts.get(file) ?? 0) + 1);
	}
	const groups = [...counts.entries()].sort((a, b) => b[1] - a[1]);
	const lines = groups.slice(0, MAX_GROUPS).map(([file, count]) => `${file}: ${count}`);
	if (groups.length > MAX_GROUPS) {
		const rest = groups.slice(MAX_GROUPS).reduce((sum, [, count]) => sum + count, 0);
		lines.push(`(+${rest} in ${groups.length - MAX_GROUPS} more files)`);
	}
	if (unrecorded > 0) lines.push(`(+${unrecorded} past the first ${recorded} recorded; not grouped)`);
	return lines;
}

/**
 * The capsule's failing-test block within `maxBytes`: every id, one per line, under
 * `FAILING_TESTS (N, all listed):` when they fit (and none went unrecorded); otherwise as many ids as
 * fit, then the rest counted per file and `restHints()`, the exact searches that find them (worked
 * out only then). "all listed" is said only when it is true: not when the run's summary counts more
 * failed tests (`failed`) than there are ids (two tests of one name in two files, a failure line not
 * read as an id); the searches follow then. Empty when there are no ids.
 */
export function failingIdsBlock(
	ids: readonly string[],
	unrecorded: number,
	maxBytes: number,
	restHints: () => readonly string[],
	failed = 0,
): string[] {
	const total = ids.length + unrecorded;
	if (total === 0) return [];
	const all = [`FAILING_TESTS (${total}, all listed):`, ...ids];
	if (unrecorded === 0 && failed <= total && capsuleLinesBytes(all) <= maxBytes) return all;

	const hints = restHints();
	if (unrecorded === 0) {
		const fewer = [
			`FAILING_TESTS (${total} listed, ${failed} counted failed; the others share a listed name, are suites failing through their tests, or were not read as ids):`,
			...ids,
			...hints,
		];
		if (capsuleLinesBytes(fewer) <= maxBytes) return fewer;
	}
	const tail = (listed: number) => [
		`MORE_FAILING_TESTS (${total - listed}, counted per file; not listed here):`,
		...groupLines(ids.slice(listed), unrecorded, ids.length),
		...(hints.length > 0 ? hints : ["(No mark common to their lines: search for a name, or read the output.)"]),
	];
	const head = (listed: number) => `FAILING_TESTS (${total}; ${listed} listed here, ${total - listed} more below):`;
	// The grouped rest of all ids is at least as long as that of any later part: reserve it first.
	let room = maxBytes - lineBytes(head(ids.length)) - capsuleLinesBytes(tail(0));
	let listed = 0;
	while (listed < ids.length && lineBytes(ids[listed]) <= room) room -= lineBytes(ids[listed++]);
	return [head(listed), ...ids.slice(0, listed), ...tail(listed)];
}
