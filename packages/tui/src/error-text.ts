import { UserError } from "prime-agent/view";

/** An error as the user reads it: a `UserError` with what to do next, any other error by its message. */
export function errorText(error: unknown): string {
	if (error instanceof UserError) return `${error.message} ${error.hint}`;
	return error instanceof Error ? error.message : String(error);
}
