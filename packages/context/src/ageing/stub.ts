/**
 * The one line an aged observation is sent as: enough to know what it was and how it ended, and
 * how to read it back exactly.
 */

/** What a stub names. Everything here is known when the observation is made. */
export interface AgedObservation {
	/** Archive id, `obs_000012`. */
	id: string;
	/** The tool that produced it (`ipython`, `bash`). */
	tool: string;
	/** The command or cell that produced it; its first line is shown. */
	command: string | null;
	bytes: number;
	lines: number;
	/** Its outcome line (`TEST_RESULT FAIL 2 failed, 40 passed`, `COMMAND_RESULT FAIL exit 2`), when it had one. */
	headline: string | null;
}

/** Longest first line of a command a stub shows. */
export const STUB_COMMAND_MAX = 80;
/** Marks the stub; `isAgedStub` recognises it. */
export const STUB_PREFIX = "[aged]";

/** The stub text: one line, the same bytes for the same observation whenever it is rendered. */
export function renderAgedStub(observation: AgedObservation): string {
	const parts = [`${STUB_PREFIX} ${observation.id}`, observation.tool];
	const command = firstLine(observation.command);
	if (command) parts.push(command);
	parts.push(`${observation.bytes.toLocaleString("en-US")} bytes, ${observation.lines.toLocaleString("en-US")} lines`);
	if (observation.headline) parts.push(oneLine(observation.headline));
	return `${parts.join(" · ")} · out of the prompt now, archived exactly: read it back with prime_context action=read id=${observation.id} (or action=search), or prime_context.text("${observation.id}") in a cell`;
}

/** Whether `text` is an aged observation's stub. */
export function isAgedStub(text: string): boolean {
	return text.startsWith(`${STUB_PREFIX} obs_`) && !text.includes("\n");
}

/** The first non-blank line of a command, control characters removed, cut to `STUB_COMMAND_MAX`. */
function firstLine(command: string | null): string {
	const line = (command ?? "").split("\n").find((text) => text.trim() !== "") ?? "";
	const clean = oneLine(line).trim();
	return clean.length > STUB_COMMAND_MAX ? `${clean.slice(0, STUB_COMMAND_MAX - 1)}…` : clean;
}

function oneLine(text: string): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
	return text.replace(/[\u0000-\u001f\u007f]+/g, " ");
}
