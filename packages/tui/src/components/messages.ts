import { type Component, Markdown, Text, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import { plainText, style } from "../style.js";
import { markdownTheme } from "../theme.js";

/** The model's answer, rendered as markdown while it streams; its thinking as one dim line. */
export class AssistantView implements Component {
	private readonly markdown = new Markdown("", 1, 0, markdownTheme);
	private thinking = "";
	private error: string | undefined;

	setContent(text: string, thinking: string): void {
		this.markdown.setText(plainText(text));
		this.thinking = thinking;
	}

	setError(message: string): void {
		this.error = message;
	}

	invalidate(): void {
		this.markdown.invalidate();
	}

	render(width: number): string[] {
		const lines: string[] = [];
		if (this.thinking.trim() !== "") {
			const last = plainText(this.thinking).trim().split("\n").pop() ?? "";
			lines.push(truncateToWidth(style.gray(style.italic(` thinking: ${last}`)), width));
		}
		lines.push(...this.markdown.render(width));
		if (this.error) for (const line of wrapTextWithAnsi(style.red(this.error), width)) lines.push(line);
		return lines;
	}
}

/** Lines of a long message (a paste) shown before the rest is counted. */
export const USER_PREVIEW_LINES = 12;

/** What the user sent: a `›` mark, then the text (a steering or follow-up message says so). */
export class UserView implements Component {
	constructor(
		private readonly text: string,
		private readonly note?: string,
	) {}

	invalidate(): void {}

	render(width: number): string[] {
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
