import type { CommandName } from "./args.js";

const GENERAL = `prime-context: keep large command output out of a model's context without losing it.

Usage: prime-context [--session NAME] <command> [arguments]

Commands:
  run -- <command> [args...]   run a command, archive its output, print a capsule or the output
  capsule [file|-]             archive a file or stdin and print its capsule or the text
  list [limit]                 recent observations, newest first
  read <id> [start:end]        exact lines of an observation
  search <id|all> <text>       case-insensitive fixed-text search
  status                       broker metrics, workflow state, config, archive size and task snapshot
  focus <text>|clear           set or clear the task focus
  add <text>                   add an open item (item_N)
  done <item-id>               complete an open item
  pin <id> / unpin <id>        keep an observation id in the task snapshot, or drop it
  doctor                       config problems, storage checks and session facts
  cleanup                      remove this session's archive (nothing else)

Options:
  --session NAME   session to use (default: one per working directory)
  --help           help for any command, e.g. prime-context search --help

Storage: $PRIME_CONTEXT_HOME, else $PRIME_AGENT_DIR/prime-context, else ~/.prime/agent/prime-context.`;

const COMMAND_HELP: Record<CommandName, string> = {
	run: `Usage: prime-context run [--session NAME] -- <command> [args...]

Runs the command without a shell, captures stdout and stderr together, archives the complete
output (tool "run") and prints what a model should see: the output itself when it is short, else a
capsule with recovery hints. Exits with the command's status (128+N when killed by signal N);
signals sent to prime-context are passed to the command. A command that cannot start exits 127.

Example: prime-context run -- npm test`,
	capsule: `Usage: prime-context capsule [--session NAME] [file|-]

Archives a file, a named pipe (capsule <(cmd)) or stdin (the default, or "-") and prints the
capsule or the text.

Example: pytest 2>&1 | prime-context capsule`,
	list: `Usage: prime-context list [--session NAME] [limit]

Lists recent observations (default 20), newest first: id, tool, source, bytes, lines, status, time.`,
	read: `Usage: prime-context read [--session NAME] <id> [start:end]

Prints exact lines (1-based, inclusive) of an observation within the readMaxBytes budget.
Ranges: 200:279, 200: (to the end), 200 (one line).

Example: prime-context read obs_000003 200:279`,
	search: `Usage: prime-context search [--session NAME] <id|all> <text...> [--context N] [--offset N] [--max N] [--limit N]

Case-insensitive fixed-text search. "all" searches the newest 20 observations (or --limit N).
  --context N   lines of context around each match, 0-20 (default 2)
  --offset N    skip the first N matches (paging)
  --max N       matches to show, 1-1000 (default: all that fit the read budget, at most 1000)
  --limit N     observations searched by "all"

Example: prime-context search obs_000003 AssertionError --context 4`,
	status: `Usage: prime-context status [--session NAME]

Shows broker metrics, configuration, archive size and the task snapshot of the session.`,
	focus: `Usage: prime-context focus [--session NAME] <text>|clear

Sets the focus of the session's task snapshot, or clears it.

Example: prime-context focus "Make the parser tests pass"`,
	add: `Usage: prime-context add [--session NAME] <text>

Adds an open item to the task snapshot; it gets the next id item_N.`,
	done: `Usage: prime-context done [--session NAME] <item-id>

Completes an open item, e.g. prime-context done item_2.`,
	pin: `Usage: prime-context pin [--session NAME] <observation-id>

Pins an archived observation so its id stays in the task snapshot.`,
	unpin: `Usage: prime-context unpin [--session NAME] <observation-id>

Removes an observation id from the pinned outputs.`,
	doctor: `Usage: prime-context doctor [--session NAME]

Reports configuration problems (file, key, value, rule), whether the storage root is writable,
and session facts. Exits 1 when something needs fixing.`,
	cleanup: `Usage: prime-context cleanup [--session NAME]

Removes this session's archived observations (and clears its pins). Other sessions are untouched.`,
	help: `Usage: prime-context help [command]`,
};

export function helpText(command: CommandName | null): string {
	return command && command !== "help" ? COMMAND_HELP[command] : GENERAL;
}
