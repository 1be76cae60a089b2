import { type Component, truncateToWidth } from "@mariozechner/pi-tui";
import { style } from "../style.js";

export type KernelState = "not started" | "starting" | "idle" | "busy" | "restarting" | "failed";

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
	/** Steering and follow-up messages waiting for the running turn. */
	queued: number;
	working: boolean;
	goal?: string;
}

/** `12.3k`, `1.2M`: short counts for a narrow line. */
export function shortCount(value: number): string {
	if (value < 1000) return String(value);
	if (value < 1_000_000) return `${(value / 1000).toFixed(value < 10_000 ? 1 : 0)}k`;
	return `${(value / 1_000_000).toFixed(1)}M`;
}

/** The status line's text: most important first, so a narrow terminal cuts the least useful part. */
export function formatStatus(info: StatusInfo): string {
	const kernelPaint = info.kernel === "busy" ? style.yellow : info.kernel === "failed" ? style.red : style.gray;
	const percent = info.contextWindow > 0 ? Math.round((100 * info.contextTokens) / info.contextWindow) : 0;
	const context = `${percent}% of ${shortCount(info.contextWindow)}`;
	const parts = [
		(info.working ? style.yellow("● working") : style.green("● ready")) + style.gray(" │ "),
		style.cyan(info.model),
		style.gray(` · ${context} · ${shortCount(info.totalTokens)} tok $${info.cost.toFixed(3)} · `),
		kernelPaint(`kernel ${info.kernel}`),
	];
	if (info.runningChildren > 0)
		parts.push(style.gray(` · ${info.runningChildren} sub-agent${info.runningChildren === 1 ? "" : "s"} running`));
	if (info.queued > 0) parts.push(style.gray(` · ${info.queued} queued`));
	if (info.goal) parts.push(style.gray(" · goal: ") + info.goal);
	return parts.join("");
}

/** The line under the editor. */
export class StatusLine implements Component {
	constructor(private readonly info: () => StatusInfo) {}

	invalidate(): void {}

	render(width: number): string[] {
		return [truncateToWidth(formatStatus(this.info()), width)];
	}
}
