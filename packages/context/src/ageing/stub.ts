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
/** Longest outcome line a stub shows (a host's record of it may come from an edited file). */
export const STUB_HEADLINE_MAX = 200;
/** Marks the stub; `isAgedStub` recognises it. */
export const STUB_PREFIX = "[aged]";

/** The stub text: one line, the same bytes for the same observation whenever it is rendered. */
export function renderAgedStub(observation: AgedObservation): string {
	const parts = [`${STUB_PREFIX} ${observation.id}`, observation.tool];
	const command = firstLine(observation.command);
	if (command) parts.push(command);
	parts.push(`${observation.bytes.toLocaleString("en-US")} bytes, ${observation.lines.toLocaleString("en-US")} lines`);
	if (observation.headline) parts.push(cut(oneLine(observation.headline), STUB_HEADLINE_MAX));
	// The host's instructions explain stubs once (`AGED_STUB_POLICY`); the line names the read itself.
	return `${parts.join(" · ")} · prime_context action=read id=${observation.id}`;
}

/** What a host tells its model once about stubs (a system prompt line). */
export const AGED_STUB_POLICY =
	'An `[aged] obs_...` line stands for an older tool output that left the prompt to save cost; it is archived exactly: read it back with prime_context action=read/search, or in the kernel `await prime_context.text("obs_...")`.';

/** Whether `text` is an aged observation's stub. */
export function isAgedStub(text: string): boolean {
	return text.startsWith(`${STUB_PREFIX} obs_`) && !text.includes("\n");
}

/** The first non-blank line of a command, control characters removed, cut to `STUB_COMMAND_MAX`. */
function firstLine(command: string | null): string {
	const line = (command ?? "").split("\n").find((text) => text.trim() !== "") ?? "";
	return cut(oneLine(line).trim(), STUB_COMMAND_MAX);
}

function cut(text: string, max: number): string {
	return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function oneLine(text: string): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
	return text.replace(/[\u0000-\u001f\u007f]+/g, " ");
}
