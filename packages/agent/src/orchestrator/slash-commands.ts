/** A prompt that is a slash command: `/name` or `/name args` (the whole prompt). */
export interface SlashCommandCall {
	name: string;
	args: string;
}

/**
 * Parse `/name args`. Only a name of letters, digits, `-` and `_` directly after the slash counts,
 * so a path such as `/etc/hosts is wrong` stays a normal prompt.
 */
export function parseSlashCommand(text: string): SlashCommandCall | undefined {
	const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
	if (!match) return undefined;
	return { name: match[1] as string, args: (match[2] ?? "").trim() };
}
