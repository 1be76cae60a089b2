import type { ThinkingLevel } from "@mariozechner/pi-agent-core";
import { ExitCode, UserError } from "../errors.js";
import { THINKING_LEVELS } from "../home/index.js";

export type Command =
	| "run"
	| "setup"
	| "doctor"
	| "sessions"
	| "package"
	| "help"
	| "version"
	| "agents"
	| "attach"
	| "status"
	| "shutdown"
	| "schedule"
	| "kernelspec";

export interface CliArgs {
	command: Command;
	/** `-p text`: run this prompt and exit. Without it, a line-by-line chat starts. */
	print?: string;
	model?: string;
	mode: "text" | "json";
	continueLatest: boolean;
	resume?: string;
	/** Start a new session file holding the path of this session to its leaf (or to `at`). */
	fork?: string;
	/** Entry id to continue from (with --resume, --continue or --fork). */
	at?: string;
	/** `sessions <ref>`: show one session's active branch. */
	sessionRef?: string;
	tools?: string[];
	thinkingLevel?: ThinkingLevel;
	/** `sessions --all`: every directory, not just the current one. */
	all: boolean;
	/** `sessions --json`. */
	json: boolean;
	/** `-e <path>` (repeatable): extension modules or package folders for this run only. */
	extensions: string[];
	/** `package install|list|remove [source] [--local]`. */
	packageAction?: "install" | "list" | "remove";
	packageSource?: string;
	/** `package ... --local`: the project's `.prime/agent/settings.json` instead of the agent home's. */
	local: boolean;
	/** `--goal <objective>` with `--goal-tokens`, `--goal-turns`, `--goal-minutes`. */
	goal?: { objective: string; tokens?: string; turns?: string; minutes?: string };
	/** `--autonomous` with `--gate` (repeatable) and `--max-*` limits. */
	autonomous?: {
		gates?: string[];
		maxContinuations?: string;
		maxTurns?: string;
		maxTokens?: string;
		maxMinutes?: string;
	};
	/** `attach <agent>`, `shutdown [<agent>]`: the agent (a key or session id prefix). */
	agentRef?: string;
	/** `shutdown --force`: kill instead of letting the worker save. */
	force: boolean;
	/** `schedule ... --steer`: into the running turn instead of a follow-up. */
	steer: boolean;
	/** `schedule`'s words: `<when> <prompt>`, `list`, `remove <id>`. */
	scheduleArgs?: string[];
	/** `--trust-project`: run the project's MCP servers, skills and extensions without an approval. */
	trustProject: boolean;
	/** `--kernel-url <url|local>`: the Jupyter Server the kernels run on (or `local`). */
	kernelUrl?: string;
	/** `kernelspec install --name <name>`: the kernelspec's name. */
	kernelspecName?: string;
}

const SUBCOMMANDS: readonly string[] = [
	"setup",
	"doctor",
	"sessions",
	"package",
	"agents",
	"attach",
	"status",
	"shutdown",
	"schedule",
	"kernelspec",
];
const PACKAGE_ACTIONS: readonly string[] = ["install", "list", "remove"];

/**
 * An option word (`-m`, `--model`, `--model=x`): a dash or two, a letter, then no space before any
 * `=`. Not a prompt that opens with a dash (`-v flag is broken`, `-5`), nor `-` (standard input).
 */
const OPTION_WORD = /^--?[A-Za-z][\w-]*(?:=.*)?$/s;
const isOption = (word: string | undefined): boolean => word !== undefined && OPTION_WORD.test(word);

/** Parse the command line (without `node` and the script). Bad input is a `UserError`. */
export function parseArgs(argv: readonly string[]): CliArgs {
	const args: CliArgs = {
		command: "run",
		mode: "text",
		continueLatest: false,
		all: false,
		json: false,
		extensions: [],
		local: false,
		force: false,
		steer: false,
		trustProject: false,
	};
	const rest = [...argv];
	const positional: string[] = [];
	let autonomous = false;
	let printLater = false;
	const goalBudget: { tokens?: string; turns?: string; minutes?: string } = {};
	const autonomousFlags: NonNullable<CliArgs["autonomous"]> = {};
	if (rest[0] && SUBCOMMANDS.includes(rest[0])) args.command = rest.shift() as Command;
	const value = (flag: string): string => {
		const next = rest.shift();
		if (next === undefined) {
			throw new UserError(`${flag} needs a value.`, "See `prime-agent --help`.", ExitCode.usage);
		}
		return next;
	};
	while (rest.length > 0) {
		const raw = rest.shift() as string;
		const eq = raw.startsWith("--") ? raw.indexOf("=") : -1;
		const flag = eq > 0 ? raw.slice(0, eq) : raw;
		if (eq > 0) rest.unshift(raw.slice(eq + 1));
		switch (flag) {
			case "--":
				// The end of the options: every word after it is an argument (`-p -- "-m is broken"`).
				if (eq < 0) {
					positional.push(...rest.splice(0));
					break;
				}
				throw new UserError(`Unknown option ${raw}.`, "See `prime-agent --help` for the options.", ExitCode.usage);
			case "-h":
			case "--help":
				args.command = "help";
				break;
			case "-v":
			case "--version":
				args.command = "version";
				break;
			case "-p":
			case "--print":
				// `-p --model x "prompt"`: the prompt comes after the options, as the one argument left.
				if (eq < 0 && (isOption(rest[0]) || rest[0] === "--")) printLater = true;
				else args.print = value(flag);
				break;
			case "-m":
			case "--model":
				args.model = value(flag);
				break;
			case "--mode": {
				const mode = value(flag);
				if (mode !== "text" && mode !== "json") {
					throw new UserError(`--mode must be "text" or "json", not "${mode}".`, "Use --mode json for scripts.");
				}
				args.mode = mode;
				break;
			}
			case "-c":
			case "--continue":
				args.continueLatest = true;
				break;
			case "-r":
			case "--resume":
				args.resume = value(flag);
				break;
			case "--fork":
				args.fork = value(flag);
				break;
			case "--at":
				args.at = value(flag);
				break;
			case "--tools":
				args.tools = value(flag).split(",");
				break;
			case "--thinking": {
				const level = value(flag) as ThinkingLevel;
				if (!THINKING_LEVELS.includes(level)) {
					throw new UserError(`--thinking must be one of ${THINKING_LEVELS.join(", ")}.`, "Fix the value and retry.");
				}
				args.thinkingLevel = level;
				break;
			}
			case "--all":
				args.all = true;
				break;
			case "--json":
				args.json = true;
				break;
			case "-e":
			case "--extension":
				args.extensions.push(value(flag));
				break;
			case "--name":
				if (args.command !== "kernelspec") {
					throw new UserError(
						"--name works only with `prime-agent kernelspec install`.",
						"See `prime-agent --help`.",
						ExitCode.usage,
					);
				}
				args.kernelspecName = value(flag);
				break;
			case "--local":
				args.local = true;
				break;
			case "--force":
				args.force = true;
				break;
			case "--steer":
				args.steer = true;
				break;
			case "--trust-project":
				args.trustProject = true;
				break;
			case "--kernel-url":
				args.kernelUrl = value(flag);
				break;
			case "--agent":
				args.agentRef = value(flag);
				break;
			case "--goal":
				args.goal = { objective: value(flag) };
				break;
			case "--goal-tokens":
				goalBudget.tokens = value(flag);
				break;
			case "--goal-turns":
				goalBudget.turns = value(flag);
				break;
			case "--goal-minutes":
				goalBudget.minutes = value(flag);
				break;
			case "--autonomous":
				autonomous = true;
				break;
			case "--gate":
				autonomousFlags.gates = [...(autonomousFlags.gates ?? []), value(flag)];
				break;
			case "--max-continuations":
				autonomousFlags.maxContinuations = value(flag);
				break;
			case "--max-turns":
				autonomousFlags.maxTurns = value(flag);
				break;
			case "--max-tokens":
				autonomousFlags.maxTokens = value(flag);
				break;
			case "--max-minutes":
				autonomousFlags.maxMinutes = value(flag);
				break;
			default:
				if (flag.startsWith("-") && flag !== "-") {
					throw new UserError(`Unknown option ${flag}.`, "See `prime-agent --help` for the options.", ExitCode.usage);
				}
				positional.push(raw);
		}
	}
	if (args.command === "package") {
		const [action, source, ...extra] = positional.splice(0);
		if (!action || !PACKAGE_ACTIONS.includes(action)) {
			throw new UserError(
				`\`prime-agent package\` needs install, list or remove${action ? `, not "${action}"` : ""}.`,
				"Use `prime-agent package install <path|npm:name@version> [--local]`, `package list` or `package remove <name>`.",
				ExitCode.usage,
			);
		}
		args.packageAction = action as CliArgs["packageAction"];
		if (action !== "list" && !source) {
			throw new UserError(
				`\`prime-agent package ${action}\` needs a package.`,
				action === "install"
					? "Pass a folder path or npm:name@version."
					: "Pass its name or path as shown by `prime-agent package list`.",
				ExitCode.usage,
			);
		}
		if (extra.length > 0 || (action === "list" && source)) {
			throw new UserError(
				`Unexpected argument "${extra[0] ?? source}".`,
				"Name one package at a time.",
				ExitCode.usage,
			);
		}
		args.packageSource = source;
	}
	if (args.command === "kernelspec") {
		const [action, extra] = positional.splice(0);
		if (action !== "install" || extra !== undefined) {
			throw new UserError(
				`\`prime-agent kernelspec\` takes install${action && action !== "install" ? `, not "${action}"` : extra ? ` alone, not "${extra}"` : ""}.`,
				"Run `prime-agent kernelspec install [--name <name>]` on the machine of the Jupyter Server.",
				ExitCode.usage,
			);
		}
	}
	if (printLater && args.print === undefined && args.command === "run") {
		if (positional.length !== 1) {
			throw new UserError(
				positional.length === 0 ? "-p needs a prompt." : `Unexpected argument "${positional[1]}".`,
				'Quote the prompt: prime-agent -p "your request" (or pass - to read it from standard input).',
				ExitCode.usage,
			);
		}
		args.print = positional.pop();
	}
	checkDaemonCommand(args, positional);
	if (args.command === "sessions" && positional.length === 1) {
		args.sessionRef = positional.pop();
	}
	if (positional.length > 0) {
		if (args.command === "sessions" || args.command === "setup" || args.command === "doctor") {
			throw new UserError(
				`Unexpected argument "${positional[args.command === "sessions" ? 1 : 0]}" for \`prime-agent ${args.command}\`.`,
				args.command === "sessions"
					? "Name at most one session: prime-agent sessions <id|path>."
					: `\`prime-agent ${args.command}\` takes no arguments.`,
				ExitCode.usage,
			);
		}
		if (args.command !== "run" || args.print !== undefined) {
			throw new UserError(
				`Unexpected argument "${positional[0]}".`,
				'Quote the prompt: prime-agent -p "your request".',
				ExitCode.usage,
			);
		}
		throw new UserError(
			`Unexpected argument "${positional[0]}".`,
			`To run a prompt, pass it with -p: prime-agent -p "${positional.join(" ")}".`,
			ExitCode.usage,
		);
	}
	checkLongRunning(args, autonomous, autonomousFlags, goalBudget);
	if (args.kernelUrl !== undefined && args.command !== "run") {
		throw new UserError(
			`--kernel-url works only when a session starts, not with \`prime-agent ${args.command}\`.`,
			args.command === "doctor"
				? 'Doctor checks the server PRIME_AGENT_KERNEL_URL or settings.json\'s "kernel.url" names: PRIME_AGENT_KERNEL_URL=<url> prime-agent doctor.'
				: 'Write it as prime-agent --kernel-url http://host:8888 -p "your request".',
			ExitCode.usage,
		);
	}
	if (args.trustProject && args.command !== "run") {
		throw new UserError(
			`--trust-project works only when a session starts, not with \`prime-agent ${args.command}\`.`,
			'Write it as prime-agent --trust-project -p "your request" (or without -p for the terminal UI).',
			ExitCode.usage,
		);
	}
	if ([args.continueLatest, args.resume !== undefined, args.fork !== undefined].filter(Boolean).length > 1) {
		throw new UserError("--continue, --resume and --fork cannot be combined.", "Pick one of them.", ExitCode.usage);
	}
	if (args.at !== undefined && !args.continueLatest && args.resume === undefined && args.fork === undefined) {
		throw new UserError(
			"--at needs a session to pick the entry from.",
			"Combine it with --resume <id>, --continue or --fork <id>; `prime-agent sessions <id>` lists entry ids.",
			ExitCode.usage,
		);
	}
	return args;
}

/** `--goal`'s budget needs `--goal`; `--gate` and `--max-*` need `--autonomous`, which needs `-p`. */
function checkLongRunning(
	args: CliArgs,
	autonomous: boolean,
	flags: NonNullable<CliArgs["autonomous"]>,
	goalBudget: { tokens?: string; turns?: string; minutes?: string },
): void {
	const budgetFlags = Object.keys(goalBudget);
	if (budgetFlags.length > 0 && !args.goal) {
		throw new UserError(
			`--goal-${budgetFlags[0]} needs --goal.`,
			`Write it as --goal "<objective>" --goal-${budgetFlags[0]} N (or set the budget with /goal --${budgetFlags[0]} N <objective>).`,
			ExitCode.usage,
		);
	}
	if (args.goal) args.goal = { ...args.goal, ...goalBudget };
	const given = Object.keys(flags);
	if (given.length > 0 && !autonomous) {
		const name = given[0] === "gates" ? "--gate" : `--${given[0]?.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
		throw new UserError(
			`${name} works only with --autonomous.`,
			'Write it as prime-agent --autonomous -p "<task>" --gate "npm test".',
			ExitCode.usage,
		);
	}
	if (!autonomous) return;
	if (args.print === undefined) {
		throw new UserError(
			"--autonomous needs a task given with -p.",
			'Write it as prime-agent --autonomous -p "<task>" --gate "npm test".',
			ExitCode.usage,
		);
	}
	args.autonomous = flags;
}

/** `agents`, `status`, `attach <agent>`, `shutdown [<agent>] [--force]`, `schedule ...`: take their words. */
function checkDaemonCommand(args: CliArgs, positional: string[]): void {
	const usage = (message: string, hint: string) => new UserError(message, hint, ExitCode.usage);
	if ((args.force && args.command !== "shutdown") || (args.steer && args.command !== "schedule"))
		throw usage(
			`${args.force ? "--force" : "--steer"} works only with \`prime-agent ${args.force ? "shutdown" : "schedule"}\`.`,
			"See `prime-agent --help`.",
		);
	if (args.agentRef !== undefined && args.command !== "schedule")
		throw usage(
			"--agent works only with `prime-agent schedule`.",
			"Name the agent directly: prime-agent attach <agent>.",
		);
	switch (args.command) {
		case "agents":
		case "status":
			if (positional.length > 0)
				throw usage(
					`Unexpected argument "${positional[0]}" for \`prime-agent ${args.command}\`.`,
					`\`prime-agent ${args.command}\` takes no arguments.`,
				);
			return;
		case "attach":
			if (positional.length !== 1)
				throw usage(
					positional.length === 0 ? "`prime-agent attach` needs an agent." : `Unexpected argument "${positional[1]}".`,
					"Write prime-agent attach <agent>; `prime-agent agents` lists them.",
				);
			args.agentRef = positional.pop();
			return;
		case "shutdown":
			if (positional.length > 1)
				throw usage(`Unexpected argument "${positional[1]}".`, "Write prime-agent shutdown [<agent>] [--force].");
			args.agentRef = positional.pop();
			return;
		case "schedule":
			args.scheduleArgs = positional.splice(0);
			return;
	}
}
