import type { SessionEvent } from "../link/session-events.js";
import type { KernelStatus } from "../tools/index.js";
import { describeSessionLine, isSessionLine } from "./session-lines.js";

export interface TextStreams {
	/** The answer: assistant text, streamed. */
	out: NodeJS.WritableStream;
	/** Progress: kernel status and one line per cell. */
	err: NodeJS.WritableStream;
}

const PREVIEW_CHARS = 100;

/**
 * One line for a tool call: the first line of a cell's code, or for an extension's tools
 * their arguments as `key=value`, so the line says what was asked.
 */
function previewArguments(args: unknown): string {
	const record = (args ?? {}) as Record<string, unknown>;
	if (typeof record.code === "string") {
		const lines = record.code.trim().split("\n");
		const first = (lines[0] ?? "").slice(0, PREVIEW_CHARS);
		return lines.length > 1 ? `${first} (+${lines.length - 1} lines)` : first;
	}
	const pairs = Object.entries(record)
		.filter(([, value]) => value !== undefined)
		.map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
		.join(" ");
	return pairs.length > PREVIEW_CHARS ? `${pairs.slice(0, PREVIEW_CHARS)}…` : pairs;
}

/**
 * Renders loop events for a terminal or a pipe: assistant text goes to `out` as it streams, and a
 * short line per cell (its first line, then its outcome) goes to `err`, so `out` stays the answer.
 */
export class TextRenderer {
	private atLineStart = true;

	constructor(private readonly streams: TextStreams) {}

	/**
	 * Any event of the session: the answer and cells as above, kernel status and side lines (a
	 * notice, a sub-agent, a goal) on `err`; the link's own events are a view's to handle.
	 */
	onEvent = (event: SessionEvent): void => {
		if (isSessionLine(event)) {
			const said = describeSessionLine(event);
			if (said) this.note(said.text);
			return;
		}
		switch (event.type) {
			case "kernel_status":
				this.onKernelStatus(event);
				break;
			case "message_update": {
				const update = event.assistantMessageEvent;
				if (update.type === "text_delta") this.write(update.delta);
				break;
			}
			case "message_end":
				if (event.message.role === "assistant" && !this.atLineStart) this.write("\n");
				break;
			case "tool_execution_start": {
				this.streams.err.write(`▸ ${event.toolName}: ${previewArguments(event.args)}\n`);
				break;
			}
			case "tool_execution_end": {
				const details = event.result?.details as
					| { durationMs?: number; errorName?: string; status?: string }
					| undefined;
				const seconds = details?.durationMs !== undefined ? ` ${(details.durationMs / 1000).toFixed(1)}s` : "";
				const what = event.isError
					? `✗ ${details?.status === "aborted" ? "interrupted" : (details?.errorName ?? "failed")}`
					: "✓";
				this.streams.err.write(`  ${what}${seconds}\n`);
				break;
			}
		}
	};

	onKernelStatus = (status: KernelStatus): void => {
		const line =
			status.phase === "starting"
				? "Starting Python kernel…"
				: status.phase === "ready"
					? `Python kernel ready (${(status.durationMs / 1000).toFixed(1)}s)`
					: status.phase === "restarting"
						? `Restarting Python kernel: ${status.reason}`
						: status.phase === "busy"
							? `Python kernel busy: ${status.reason}; the next cell starts when it ends`
							: status.phase === "idle"
								? "Python kernel idle: the interrupted cell has ended"
								: `Python kernel failed to start: ${status.message}`;
		this.streams.err.write(`${line}\n`);
	};

	/**
	 * A line beside the answer (a goal, a sub-agent, a notice) on `err`. An answer still streaming
	 * on `out` is ended first, so on a terminal the line never runs on from the answer's last word.
	 */
	note = (line: string): void => {
		if (!this.atLineStart) this.write("\n");
		this.streams.err.write(`${line}\n`);
	};

	private write(text: string): void {
		if (text === "") return;
		this.streams.out.write(text);
		this.atLineStart = text.endsWith("\n");
	}
}
