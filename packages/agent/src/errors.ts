/**
 * Exit codes of the `prime-agent` command. Documented in the README and `--help`.
 */
export const ExitCode = {
	ok: 0,
	/** The model or provider failed during the run. */
	modelError: 1,
	/** Bad command line, unknown model, removed tool, broken config file. */
	usage: 2,
	/** No credentials for the selected provider. */
	missingCredentials: 3,
	/** The Python kernel could not be found or started. */
	kernel: 4,
	/**
	 * A limit stopped the work before it was done: an autonomous run's limit (continuations, turns,
	 * tokens, time) or a goal's budget. Never success.
	 */
	limitReached: 5,
	/** The disk refused a write of ours (full, quota, read-only, permissions): the message names it. */
	disk: 6,
	/** The user interrupted the run (Ctrl-C). */
	interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * An error a user can meet: `message` says what happened, `hint` says what to do next.
 * The CLI prints both and exits with `exitCode`; it never prints a stack for these.
 */
export class UserError extends Error {
	constructor(
		message: string,
		readonly hint: string,
		readonly exitCode: ExitCodeValue = ExitCode.usage,
	) {
		super(message);
		this.name = "UserError";
	}
}
