/**
 * What print mode and the line chat write when a run ends, from its description (`describeRunEnd`):
 * apart from the modes that describe it, so a view of a worker's session loads light.
 */
import type { LinkRunEnd } from "../link/session-events.js";
import type { TextStreams } from "./text-renderer.js";

/**
 * How print mode ends a run: the message on `err` (`Error: ` first for a refused run), else a
 * command's answer on `out`, since it is the output (`-p "/pc status" > status.txt`).
 */
export function printRunEnd(
	end: Pick<LinkRunEnd, "message" | "refused" | "commandMessage">,
	streams: TextStreams,
): void {
	if (end.message) streams.err.write(`${end.refused ? "Error: " : ""}${end.message}\n`);
	else if (end.commandMessage) streams.out.write(`${end.commandMessage}\n`);
}

/** How the line chat ends a run: a failure's message or a command's answer, and a stopped turn said. */
export function chatRunEnd(
	end: { status: string } & Pick<LinkRunEnd, "message" | "commandMessage">,
	err: NodeJS.WritableStream,
): void {
	if (end.status === "error" && end.message) err.write(`${end.message}\n`);
	else if (end.commandMessage) err.write(`${end.commandMessage}\n`);
	if (end.status === "aborted") err.write("Turn stopped.\n");
}
