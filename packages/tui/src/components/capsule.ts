import { type Component, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import { style } from "../style.js";

/** What the card shows of a Prime Context capsule (parsed from the tool result the model read). */
export interface CapsuleInfo {
	id: string;
	tool: string;
	bytes: number;
	lines: number;
	/** `TEST_RESULT FAIL 3 failed, ...`, `COMMAND_RESULT PASS exit 0`, or the capsule's first line. */
	status: string;
	/** The whole capsule text, as the model saw it. */
	text: string;
}

const OPEN_TAG = /<prime_context_output\s+([^>]*)>/;

/** The capsule in a tool result's text, or undefined when the result is plain output. */
export function parseCapsule(text: string): CapsuleInfo | undefined {
	const open = OPEN_TAG.exec(text);
	if (!open) return undefined;
	const attributes = new Map<string, string>();
	for (const match of (open[1] as string).matchAll(/(\w+)="([^"]*)"/g))
		attributes.set(match[1] as string, match[2] as string);
	const id = attributes.get("id");
	if (!id) return undefined;
	const body = text.slice(open.index + open[0].length).split("</prime_context_output>")[0] ?? "";
	const bodyLines = body.split("\n").filter((line) => line.trim() !== "");
	const status =
		bodyLines.find((line) => /^(TEST_RESULT|COMMAND_RESULT)\b/.test(line)) ?? bodyLines[0]?.trim() ?? "(empty)";
	return {
		id,
		tool: attributes.get("tool") ?? "",
		bytes: Number(attributes.get("bytes") ?? 0),
		lines: Number(attributes.get("lines") ?? 0),
		status,
		text: text.slice(open.index),
	};
}

/** Reads lines of an archived observation (the recovery read, no model call): `start..end`, 1-based. */
export type ArchiveReader = (id: string, start: number, end: number) => Promise<string>;

/** Lines of the archive an expanded card shows. */
export const ARCHIVE_PAGE_LINES = 40;

/**
 * A capsule as a compact card: observation id, size and status. Expanded, it shows the capsule
 * and the first page of the archived output, read from the archive (never through the model).
 */
export class CapsuleCard implements Component {
	private archive: { text?: string; error?: string } | undefined;

	constructor(
		readonly capsule: CapsuleInfo,
		private readonly read: ArchiveReader,
		private readonly isExpanded: () => boolean,
		private readonly onLoaded: () => void,
	) {}

	invalidate(): void {}

	render(width: number): string[] {
		const { capsule } = this;
		const fail = /\bFAIL\b/.test(capsule.status);
		const pass = /\bPASS\b/.test(capsule.status);
		const paint = fail ? style.red : pass ? style.green : (text: string) => text;
		const size = `${capsule.bytes.toLocaleString("en-US")} bytes · ${capsule.lines.toLocaleString("en-US")} lines`;
		const lines = [
			truncateToWidth(style.gray("┌ ") + style.bold(capsule.id) + style.gray(` · ${capsule.tool} · ${size}`), width),
			truncateToWidth(style.gray("│ ") + paint(capsule.status), width),
		];
		if (!this.isExpanded()) {
			lines.push(truncateToWidth(style.gray("└ archived · Ctrl-O reads it here"), width));
			return lines;
		}
		const inner = Math.max(1, width - 2);
		for (const line of capsule.text.split("\n")) {
			for (const wrapped of wrapTextWithAnsi(line, inner)) lines.push(style.gray("│ ") + wrapped);
		}
		const last = Math.min(ARCHIVE_PAGE_LINES, capsule.lines);
		if (!this.archive) this.load(last);
		lines.push(truncateToWidth(style.gray(`├ archive lines 1-${last} of ${capsule.lines}:`), width));
		const text = this.archive?.error ?? this.archive?.text ?? "reading…";
		for (const line of text.split("\n")) {
			for (const wrapped of wrapTextWithAnsi(line, inner)) lines.push(style.gray("│ ") + wrapped);
		}
		// `/pc read` ends a partial page with the command that reads on.
		lines.push(truncateToWidth(style.gray("└ Ctrl-O collapses"), width));
		return lines;
	}

	private load(last: number): void {
		this.archive = {};
		this.read(this.capsule.id, 1, Math.max(1, last)).then(
			(text) => {
				this.archive = { text };
				this.onLoaded();
			},
			(error: Error) => {
				this.archive = { error: `The archive could not be read: ${error.message}` };
				this.onLoaded();
			},
		);
	}
}
