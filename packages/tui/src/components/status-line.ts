import { type Component, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { style } from "../style.js";

/**
 * `restarted`: killed after a stubborn cell; `died`: the kernel process ended during a cell. In
 * both cases a new kernel starts with the next cell. `stopped`: the session has ended.
 */
export type KernelState =
	| "not started"
	| "starting"
	| "idle"
	| "busy"
	| "restarting"
	| "restarted"
	| "died"
	| "failed"
	| "stopped";

/** Everything the status line shows, gathered by the app. */
export interface StatusInfo {
	model: string;
	/** Tokens in the context now, and the model's window. */
	contextTokens: number;
	contextWindow: number;
	/** Tokens and cost of the session, its sub-agents included. */
	totalTokens: number;
	cost: number;
	kernel: KernelState;
	runningChildren: number;
	/** What the session holds queued: steering, follow-ups and commands waiting for the running turn. */
	queued: number;
	working: boolean;
	/** The session has ended (its worker stopped, or the UI closed it in this process). */
	stopped?: boolean;
	goal?: string;
}

/** `12.3k`, `1.2M`: short counts for a narrow line. */
export function shortCount(value: number): string {
	if (value < 1000) return String(value);
	if (value < 1_000_000) return `${(value / 1000).toFixed(value < 10_000 ? 1 : 0)}k`;
	return `${(value / 1_000_000).toFixed(1)}M`;
}

/** The status line's pieces (joined by ` · `): the session's state, then what runs beside it (sub-agents, queue, goal). */
function statusPieces(info: StatusInfo): string[] {
	const kernelPaint =
		info.kernel === "busy" ? style.yellow : info.kernel === "failed" || info.kernel === "died" ? style.red : style.gray;
	const percent = info.contextWindow > 0 ? Math.round((100 * info.contextTokens) / info.contextWindow) : 0;
	const main = [
		(info.stopped ? style.gray("● stopped") : info.working ? style.yellow("● working") : style.green("● ready")) +
			style.gray(" │ ") +
			kernelPaint(`kernel ${info.kernel}`),
		style.cyan(info.model),
		style.gray(`${percent}% of ${shortCount(info.contextWindow)}`),
		style.gray(`${shortCount(info.totalTokens)} tok $${info.cost.toFixed(3)}`),
	];
	const extras: string[] = [];
	if (info.runningChildren > 0)
		extras.push(style.gray(`${info.runningChildren} sub-agent${info.runningChildren === 1 ? "" : "s"} running`));
	if (info.queued > 0) extras.push(style.gray(`${info.queued} queued`));
	if (info.goal) extras.push(style.gray("goal: ") + info.goal.replace(/\s+/g, " ").trim());
	return [...main, ...extras];
}

const SEPARATOR = style.gray(" · ");

/** The status as one line (what a wide terminal shows). */
export function formatStatus(info: StatusInfo): string {
	return statusPieces(info).join(SEPARATOR);
}

/**
 * The status for `width` columns: one line when it fits, else wrapped between its pieces, so
 * nothing (the cost, the queue) is cut off; only a piece wider than the terminal is cut.
 */
export function statusLines(info: StatusInfo, width: number): string[] {
	return flow(statusPieces(info), width);
}

/** `pieces` joined by ` · ` into lines of at most `width` columns, breaking between pieces. */
function flow(pieces: string[], width: number): string[] {
	const lines: string[] = [];
	let line = "";
	for (const piece of pieces) {
		const joined = line ? line + SEPARATOR + piece : piece;
		if (!line || visibleWidth(joined) <= width) line = joined;
		else {
			lines.push(line);
			line = piece;
		}
	}
	if (line) lines.push(line);
	return lines.map((text) => truncateToWidth(text, width));
}

/** The status under the editor. */
export class StatusLine implements Component {
	private readonly waiting: (() => void)[] = [];

	constructor(private readonly info: () => StatusInfo) {}

	/**
	 * Resolves once a frame has drawn the status line (render is called in the middle of drawing a
	 * frame; the promise's callbacks run after the frame is written).
	 */
	drawn(): Promise<void> {
		return new Promise((resolve) => this.waiting.push(resolve));
	}

	invalidate(): void {}

	render(width: number): string[] {
		const lines = statusLines(this.info(), width);
		for (const resolve of this.waiting.splice(0)) resolve();
		return lines;
	}
}
