import { existsSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import {
	type AutocompleteItem,
	type AutocompleteProvider,
	type AutocompleteSuggestions,
	CombinedAutocompleteProvider,
	type SlashCommand,
} from "@mariozechner/pi-tui";

/** Folders `@` completion never lists (large, generated, or version control). */
const SKIPPED = new Set([".git", "node_modules", "__pycache__", ".venv", "dist"]);
const MAX_FILE_ITEMS = 30;

/**
 * Slash commands and `@` file paths for the editor. The command list is asked for on every `/`
 * (commands come from the session at run time, so ones added later are offered too). pi-tui's
 * own `@` search needs `fd`; where it finds nothing (no `fd` installed) the folder named so far
 * is listed instead.
 */
export class PromptCompletion implements AutocompleteProvider {
	constructor(
		private readonly commands: () => SlashCommand[],
		private readonly cwd: () => string,
	) {}

	async getSuggestions(
		lines: string[],
		cursorLine: number,
		cursorCol: number,
		options: { signal: AbortSignal; force?: boolean },
	): Promise<AutocompleteSuggestions | null> {
		const found = await this.combined().getSuggestions(lines, cursorLine, cursorCol, options);
		if (found) return found;
		const before = (lines[cursorLine] ?? "").slice(0, cursorCol);
		const at = /(?:^|\s)(@[^\s"]*)$/.exec(before)?.[1];
		if (!at) return null;
		const items = listFolder(this.cwd(), at.slice(1));
		return items.length > 0 ? { items, prefix: at } : null;
	}

	applyCompletion(lines: string[], cursorLine: number, cursorCol: number, item: AutocompleteItem, prefix: string) {
		return this.combined().applyCompletion(lines, cursorLine, cursorCol, item, prefix);
	}

	shouldTriggerFileCompletion(lines: string[], cursorLine: number, cursorCol: number): boolean {
		return this.combined().shouldTriggerFileCompletion(lines, cursorLine, cursorCol);
	}

	private combined(): CombinedAutocompleteProvider {
		return new CombinedAutocompleteProvider(this.commands(), this.cwd(), this.fd);
	}

	/** `fd` (Debian names it `fdfind`) on the PATH, for pi-tui's fuzzy `@` search; null without it. */
	private readonly fd = findOnPath(["fd", "fdfind"]);
}

function findOnPath(names: string[]): string | null {
	for (const dir of (process.env.PATH ?? "").split(delimiter)) {
		for (const name of names) if (dir && existsSync(join(dir, name))) return join(dir, name);
	}
	return null;
}

/** Entries of the folder in `typed` (relative to `cwd`) whose names start with its last part. */
export function listFolder(cwd: string, typed: string): AutocompleteItem[] {
	const slash = typed.lastIndexOf("/");
	const folder = slash === -1 ? "" : typed.slice(0, slash + 1);
	const start = typed.slice(slash + 1).toLowerCase();
	let entries: { name: string; directory: boolean }[];
	try {
		entries = readdirSync(join(cwd, folder), { withFileTypes: true }).map((entry) => ({
			name: entry.name,
			directory: entry.isDirectory(),
		}));
	} catch {
		return [];
	}
	return entries
		.filter((entry) => entry.name.toLowerCase().startsWith(start) && !SKIPPED.has(entry.name))
		.filter((entry) => start.startsWith(".") || !entry.name.startsWith("."))
		.sort((a, b) => Number(b.directory) - Number(a.directory) || a.name.localeCompare(b.name))
		.slice(0, MAX_FILE_ITEMS)
		.map((entry) => ({
			value: `@${folder}${entry.name}${entry.directory ? "/" : ""}`,
			label: `${entry.name}${entry.directory ? "/" : ""}`,
			description: folder || undefined,
		}));
}

/** Completion of a command's first argument from the words it names (none: no completion). */
export function argumentCompletions(
	words: readonly string[] | undefined,
): Pick<SlashCommand, "getArgumentCompletions"> {
	if (!words?.length) return {};
	return {
		getArgumentCompletions: (prefix) => {
			if (/\s/.test(prefix)) return null;
			const items = words.filter((word) => word.startsWith(prefix)).map((word) => ({ value: word, label: word }));
			return items.length > 0 ? items : null;
		},
	};
}
