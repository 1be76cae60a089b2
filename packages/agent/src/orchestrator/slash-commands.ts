/** A prompt that is a slash command: `/name` or `/name args` (the whole prompt). */
export interface SlashCommandCall {
	name: string;
	args: string;
}

/**
 * Parse `/name args`. Only a name of letters, digits, `-` and `_` directly after the slash counts,
 * so a path such as `/etc/hosts is wrong` stays a normal prompt; `//` starts a normal prompt too
 * (see `promptText`).
 */
export function parseSlashCommand(text: string): SlashCommandCall | undefined {
	if (text.trimStart().startsWith("//")) return undefined;
	const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
	if (!match) return undefined;
	return { name: match[1] as string, args: (match[2] ?? "").trim() };
}

/** The text the model gets for a prompt: a leading `//` (a prompt that is not a command) loses one slash. */
export function promptText(text: string): string {
	const start = text.length - text.trimStart().length;
	return text.startsWith("//", start) ? text.slice(0, start) + text.slice(start + 1) : text;
}
