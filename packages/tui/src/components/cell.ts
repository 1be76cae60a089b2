import { type Component, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import { highlightCode } from "../highlight.js";
import { plainText, style } from "../style.js";
import { type ArchiveReader, CapsuleCard, parseCapsule } from "./capsule.js";

/** Lines of code and of output a collapsed cell shows. */
export const COLLAPSED_CODE_LINES = 8;
export const COLLAPSED_OUTPUT_LINES = 4;
/** An expanded result stops here; the rest is in the session (and the archive, for capsules). */
export const EXPANDED_OUTPUT_LINES = 200;

export type CellState = "running" | "ok" | "error" | "aborted" | "died";

export interface CellOptions {
	toolName: string;
	args: unknown;
	/** Whether results show in full (Ctrl-O), shared by every cell. */
	isExpanded(): boolean;
	readArchive: ArchiveReader;
	requestRender(): void;
	/** When the call was made (a cell laid out from the history); now by default. */
	startedAt?: number;
}

/**
 * One tool call: for `ipython` its code, syntax highlighted, then its result: the last lines of
 * the output while collapsed, up to `EXPANDED_OUTPUT_LINES` expanded; a Prime Context capsule
 * becomes a `CapsuleCard`. Other tools show their arguments as `key=value`.
 */
export class CellView implements Component {
	state: CellState = "running";
	private output = "";
	private errorName: string | undefined;
	/** The process running the session stopped during this cell (its result was written on resume). */
	private cutOff = false;
	private durationMs: number | undefined;
	private readonly startedAt: number;
	private card: CapsuleCard | undefined;
	private readonly code: string;
	/** Bumped on every change; a finished cell's lines are cached per width, expansion and version. */
	private version = 0;
	private cache: { key: string; lines: string[] } | undefined;

	constructor(private readonly options: CellOptions) {
		this.startedAt = options.startedAt ?? Date.now();
		const args = (options.args ?? {}) as Record<string, unknown>;
		this.code =
			typeof args.code === "string"
				? args.code
				: Object.entries(args)
						.filter(([, value]) => value !== undefined)
						.map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
						.join(" ");
	}

	/** Output streamed while the cell runs. */
	setPartial(text: string): void {
		this.output = text;
		this.version++;
	}

	/** The finished result: the content the model read, and the tool's details when it has them. */
	finish(text: string, isError: boolean, details: unknown): void {
		const known = (details ?? {}) as { status?: string; errorName?: string; durationMs?: number; cutOff?: boolean };
		this.output = text;
		this.errorName = known.errorName;
		this.cutOff = known.cutOff === true;
		this.durationMs = known.durationMs ?? Date.now() - this.startedAt;
		const status = known.status;
		this.state = status === "aborted" || status === "died" ? status : isError || status === "error" ? "error" : "ok";
		this.version++;
		const capsule = parseCapsule(text);
		// The card reads the archive on its own: its lines change then, so the cached ones go.
		const loaded = () => {
			this.version++;
			this.options.requestRender();
		};
		if (capsule) this.card = new CapsuleCard(capsule, this.options.readArchive, this.options.isExpanded, loaded);
	}

	get toolName(): string {
		return this.options.toolName;
	}

	get capsuleId(): string | undefined {
		return this.card?.capsule.id;
	}

	invalidate(): void {
		this.cache = undefined;
	}

	render(width: number): string[] {
		// A running cell's header shows the time it has run, so only a finished cell is cached.
		const key = `${width}|${this.options.isExpanded()}|${this.version}`;
		if (this.state !== "running" && this.cache?.key === key) return this.cache.lines;
		const lines = this.layout(width);
		this.cache = this.state === "running" ? undefined : { key, lines };
		return lines;
	}

	private layout(width: number): string[] {
		const expanded = this.options.isExpanded();
		const lines = [truncateToWidth(`${this.badge()} ${style.bold(this.options.toolName)}${this.timing()}`, width)];
		const inner = Math.max(1, width - 2);
		const codeLines = this.options.toolName === "ipython" ? highlightCode(this.code).split("\n") : [this.code];
		const shownCode = expanded ? codeLines : codeLines.slice(0, COLLAPSED_CODE_LINES);
		for (const line of shownCode) {
			const wrapped = expanded ? wrapTextWithAnsi(line, inner) : [truncateToWidth(line, inner)];
			for (const part of wrapped) lines.push(style.gray("│ ") + part);
		}
		if (shownCode.length < codeLines.length)
			lines.push(style.gray(`│ … ${codeLines.length - shownCode.length} more lines of code`));
		if (this.card) {
			for (const line of this.card.render(width)) lines.push(line);
			return lines;
		}
		const output = plainText(this.output).replace(/\n+$/, "");
		if (output === "") {
			if (this.state !== "running") lines.push(style.gray("└ (no output)"));
			return lines;
		}
		const all = output.split("\n");
		const limit = expanded ? EXPANDED_OUTPUT_LINES : COLLAPSED_OUTPUT_LINES;
		// Collapsed: the end of the output (where the result and the traceback are).
		const shown = expanded ? all.slice(0, limit) : all.slice(-limit);
		const hidden = all.length - shown.length;
		if (hidden > 0 && !expanded) lines.push(style.gray(`├ … ${hidden} earlier lines (Ctrl-O shows them)`));
		const paint = this.state === "error" || this.state === "died" ? style.red : (text: string) => text;
		for (const line of shown) {
			const parts = expanded ? wrapTextWithAnsi(line, inner) : [truncateToWidth(line, inner)];
			for (const part of parts) lines.push(style.gray("│ ") + paint(part));
		}
		if (hidden > 0 && expanded) lines.push(style.gray(`├ … ${hidden} more lines (in the session file)`));
		lines.push(style.gray("└"));
		return lines;
	}

	private badge(): string {
		switch (this.state) {
			case "running":
				return style.yellow("●");
			case "ok":
				return style.green("✓");
			case "aborted":
				return style.yellow("✗ interrupted");
			case "died":
				return style.red(this.cutOff ? "✗ cut off" : "✗ kernel died");
			default:
				return style.red(`✗ ${this.errorName ?? "failed"}`);
		}
	}

	private timing(): string {
		const ms = this.durationMs ?? Date.now() - this.startedAt;
		const text = ` ${(ms / 1000).toFixed(1)}s`;
		return style.gray(this.state === "running" ? `${text} running (Esc interrupts)` : text);
	}
}
