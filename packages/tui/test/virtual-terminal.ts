import type { Terminal } from "@mariozechner/pi-tui";
import type { InteractiveApp } from "../src/app.js";

/**
 * A terminal in memory for in-process tests (pi-tui ships no virtual terminal in its package):
 * keys are fed with `send`, writes are kept, and the size can change (`resize` fires the UI's
 * resize handler as a real terminal's SIGWINCH would).
 */
export class VirtualTerminal implements Terminal {
	written = "";
	private onInput: ((data: string) => void) | undefined;
	private onResize: (() => void) | undefined;

	constructor(
		private width = 80,
		private height = 24,
	) {}

	start(onInput: (data: string) => void, onResize: () => void): void {
		this.onInput = onInput;
		this.onResize = onResize;
	}

	stop(): void {
		this.onInput = undefined;
	}

	async drainInput(): Promise<void> {}

	/** Type keys or text as the terminal would send them (`\r` Enter, `\x03` Ctrl-C, `\x1b` Esc). */
	send(data: string): void {
		if (!this.onInput) throw new Error("the UI is not reading keys");
		this.onInput(data);
	}

	resize(width: number, height: number): void {
		this.width = width;
		this.height = height;
		this.onResize?.();
	}

	write(data: string): void {
		this.written += data;
	}

	get columns(): number {
		return this.width;
	}

	get rows(): number {
		return this.height;
	}

	get kittyProtocolActive(): boolean {
		return false;
	}

	moveBy(): void {}
	hideCursor(): void {}
	showCursor(): void {}
	clearLine(): void {}
	clearFromCursor(): void {}
	clearScreen(): void {}
	setTitle(): void {}
	setProgress(): void {}
}

/** Text without escape sequences (what a reader sees of a styled line). */
export function visible(text: string): string {
	// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is removed.
	return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b_[^\x07]*\x07|\x1b\][^\x07]*\x07/g, "");
}

/** The conversation as a reader sees it (every line, escapes removed). */
export function screen(app: InteractiveApp, width = 80): string {
	return app.tui
		.render(width)
		.map((line) => visible(line).trimEnd())
		.join("\n");
}

const STATUS_LINE = /● (?:ready|working|stopped) │ kernel [^\r\n]*/g;

/** The status line of a screen. */
export function statusOf(text: string): string {
	return text.match(STATUS_LINE)?.[0]?.trimEnd() ?? "";
}

/** The last status line the terminal was sent: what stays on it once the UI has gone. */
export function lastStatusWritten(terminal: VirtualTerminal): string {
	return visible(terminal.written).match(STATUS_LINE)?.at(-1)?.trimEnd() ?? "";
}

/** Poll the rendered UI until `test` passes (`timeoutMs`, 15 s by default); throws with the last screen. */
export async function waitFor(
	app: InteractiveApp,
	test: string | ((text: string) => boolean),
	timeoutMs = 15_000,
): Promise<string> {
	const passes = typeof test === "string" ? (text: string) => text.includes(test) : test;
	const deadline = Date.now() + timeoutMs;
	let last = "";
	while (Date.now() < deadline) {
		last = screen(app);
		if (passes(last)) return last;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	throw new Error(`The UI never showed ${String(test)}. Last screen:\n${last}`);
}

export function type(terminal: VirtualTerminal, text: string): void {
	for (const char of text) terminal.send(char);
}

/** Type `text` and press Enter. */
export function submit(terminal: VirtualTerminal, text: string): void {
	type(terminal, text);
	terminal.send("\r");
}
