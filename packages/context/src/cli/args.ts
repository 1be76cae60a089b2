/** A mistake in how the command line was typed; the message says what to type instead. */
export class UsageError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "UsageError";
	}
}

export const COMMANDS = [
	"run",
	"capsule",
	"list",
	"read",
	"search",
	"status",
	"focus",
	"add",
	"done",
	"pin",
	"unpin",
	"doctor",
	"cleanup",
	"help",
] as const;
export type CommandName = (typeof COMMANDS)[number];

/** Options (beyond --session and --help) each command accepts; each takes one value. */
const VALUE_OPTIONS: Record<CommandName, string[]> = {
	run: [],
	capsule: [],
	list: [],
	read: [],
	search: ["context", "offset", "max", "limit"],
	status: [],
	focus: [],
	add: [],
	done: [],
	pin: [],
	unpin: [],
	doctor: [],
	cleanup: [],
	help: [],
};

export interface ParsedArgs {
	command: CommandName | null;
	session?: string;
	help: boolean;
	positional: string[];
	options: Record<string, string>;
	/** For `run`: the command and its arguments, exactly as given after `--`. */
	commandArgv: string[];
}

/**
 * Parses `prime-context [--session NAME] <command> [options] [args]`. For `run`, everything after
 * `--` (or after the first non-option) is the command, untouched.
 */
export function parseArgs(argv: string[]): ParsedArgs {
	const parsed: ParsedArgs = { command: null, help: false, positional: [], options: {}, commandArgv: [] };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (parsed.command === "run" && (arg === "--" || !arg.startsWith("-"))) {
			parsed.commandArgv = argv.slice(arg === "--" ? i + 1 : i);
			break;
		}
		if (arg === "--") {
			parsed.positional.push(...argv.slice(i + 1));
			break;
		}
		if (arg === "--help" || arg === "-h") {
			parsed.help = true;
			continue;
		}
		if (arg.startsWith("--")) {
			const [flag, inline] = splitFlag(arg);
			const value = (): string => {
				if (inline !== undefined) return inline;
				const next = argv[++i];
				if (next === undefined) throw new UsageError(`--${flag} needs a value, e.g. --${flag} ${example(flag)}`);
				return next;
			};
			if (flag === "session") {
				parsed.session = value();
				continue;
			}
			if (parsed.command && VALUE_OPTIONS[parsed.command].includes(flag)) {
				parsed.options[flag] = value();
				continue;
			}
			const where = parsed.command ? ` for ${parsed.command}` : "";
			throw new UsageError(
				`unknown option --${flag}${where}; see \`prime-context ${parsed.command ?? ""}${parsed.command ? " " : ""}--help\``,
			);
		}
		if (arg.startsWith("-") && arg !== "-") {
			throw new UsageError(
				`unknown option ${arg}; see \`prime-context ${parsed.command ? `${parsed.command} ` : ""}--help\``,
			);
		}
		if (parsed.command === null) {
			if (!(COMMANDS as readonly string[]).includes(arg)) {
				throw new UsageError(
					`unknown command ${JSON.stringify(arg)}; commands: ${COMMANDS.join(", ")}. See \`prime-context --help\``,
				);
			}
			parsed.command = arg as CommandName;
			continue;
		}
		parsed.positional.push(arg);
	}
	return parsed;
}

function splitFlag(arg: string): [string, string | undefined] {
	const eq = arg.indexOf("=");
	return eq === -1 ? [arg.slice(2), undefined] : [arg.slice(2, eq), arg.slice(eq + 1)];
}

function example(flag: string): string {
	return flag === "session" ? "my-session" : "5";
}

/** A non-negative integer option or argument, or a usage error naming it. */
export function integerArg(name: string, value: string | undefined, min: number, max: number): number | undefined {
	if (value === undefined) return undefined;
	const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
	if (!Number.isSafeInteger(number) || number < min || number > max) {
		throw new UsageError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
	}
	return number;
}

/** `start:end`, `start:` or `start` (1-based, inclusive). */
export function parseRange(text: string): { startLine: number; endLine?: number } {
	const match = /^(\d+)(?::(\d*))?$/.exec(text);
	if (!match) throw new UsageError(`line range must look like 200:279, 200: or 200, got ${JSON.stringify(text)}`);
	const startLine = Number(match[1]);
	const endLine = match[2] ? Number(match[2]) : match[2] === undefined ? startLine : undefined;
	if (startLine < 1) {
		throw new UsageError(`line range ${text} starts at line 0, but lines are numbered from 1; e.g. 1:${endLine || 80}`);
	}
	if (endLine !== undefined && endLine < startLine) {
		throw new UsageError(
			`line range ${text} ends before it starts; write start:end with start <= end, e.g. ${endLine}:${startLine}`,
		);
	}
	return { startLine, endLine };
}

/** The command as a person would type it, quoting arguments a shell would split. */
export function displayCommand(argv: string[]): string {
	return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(" ");
}
