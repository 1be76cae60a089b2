import { type Component, Markdown, Text, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import { plainText, style } from "../style.js";
import { markdownTheme } from "../theme.js";

/**
 * Where a streaming answer splits into a settled part and the part still growing: the last blank
 * line outside a code fence. Everything before it no longer changes while the answer streams.
 */
export function settledLength(text: string): number {
	let split = 0;
	let fenced = false;
	let index = 0;
	for (const line of text.split("\n")) {
		if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
		else if (!fenced && line.trim() === "" && index > 0) split = index;
		index += line.length + 1;
	}
	return split;
}

/**
 * The model's answer, rendered as markdown while it streams; its thinking as one dim line. The
 * settled paragraphs and the growing tail are two markdown blocks, so each update parses only
 * the tail (a long answer does not get slower to stream as it grows).
 */
export class AssistantView implements Component {
	private readonly settled = new Markdown("", 1, 0, markdownTheme);
	private readonly tail = new Markdown("", 1, 0, markdownTheme);
	private settledText = "";
	private tailText = "";
	private thinking = "";
	private error: string | undefined;

	setContent(text: string, thinking: string): void {
		const plain = plainText(text);
		const split = settledLength(plain);
		const settled = plain.slice(0, split).trimEnd();
		const tail = plain.slice(split).replace(/^\n+/, "");
		if (settled !== this.settledText) {
			this.settledText = settled;
			this.settled.setText(settled);
		}
		if (tail !== this.tailText) {
			this.tailText = tail;
			this.tail.setText(tail);
		}
		this.thinking = thinking;
	}

	setError(message: string): void {
		this.error = message;
	}

	invalidate(): void {
		this.settled.invalidate();
		this.tail.invalidate();
	}

	render(width: number): string[] {
		const lines: string[] = [];
		if (this.thinking.trim() !== "") {
			const last = plainText(this.thinking).trim().split("\n").pop() ?? "";
			lines.push(truncateToWidth(style.gray(style.italic(` thinking: ${last}`)), width));
		}
		const settled = this.settled.render(width);
		const tail = this.tail.render(width);
		lines.push(...settled);
		// The blank line between blocks, padded as markdown pads its own lines.
		if (settled.length > 0 && tail.length > 0) lines.push(" ".repeat(width));
		lines.push(...tail);
		if (this.error) {
			// Its own paragraph: after a half-written sentence it must not read as the answer's next line.
			if (lines.length > 0) lines.push(" ".repeat(width));
			for (const line of wrapTextWithAnsi(style.red(this.error), width)) lines.push(line);
		}
		return lines;
	}
}

/** Lines of a long message (a paste) shown before the rest is counted. */
export const USER_PREVIEW_LINES = 12;

/** What the user sent: a `›` mark, then the text (a steering or follow-up message says so). */
export class UserView implements Component {
	private cache: { width: number; lines: string[] } | undefined;

	constructor(
		private readonly text: string,
		private readonly note?: string,
	) {}

	invalidate(): void {
		this.cache = undefined;
	}

	render(width: number): string[] {
		if (this.cache?.width !== width) this.cache = { width, lines: this.layout(width) };
		return this.cache.lines;
	}

	private layout(width: number): string[] {
		const body = plainText(this.text).split("\n");
		const shown = body.slice(0, USER_PREVIEW_LINES);
		const lines: string[] = [];
		for (const line of shown) {
			for (const part of wrapTextWithAnsi(line, Math.max(1, width - 2))) {
				lines.push(`${lines.length === 0 ? style.cyan("› ") : "  "}${style.bold(part)}`);
			}
		}
		if (body.length > shown.length) lines.push(style.gray(`  … ${body.length - shown.length} more lines`));
		if (this.note) lines.push(truncateToWidth(style.gray(`  ${this.note}`), width));
		return lines;
	}
}

/** A line from the host: command answers, compactions, sub-agent progress, errors. */
export class NoteView extends Text {
	constructor(text: string, tone: "info" | "error" = "info") {
		const paint = tone === "error" ? style.red : style.gray;
		super(
			plainText(text)
				.split("\n")
				.map((line) => paint(line))
				.join("\n"),
			1,
			0,
		);
	}
}

/** A block of the conversation with one blank line above it, when it shows anything at all. */
export class Spaced implements Component {
	constructor(readonly inner: Component) {}

	invalidate(): void {
		this.inner.invalidate();
	}

	render(width: number): string[] {
		const lines = this.inner.render(width);
		return lines.length === 0 ? lines : ["", ...lines];
	}
}
