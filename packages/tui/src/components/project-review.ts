import { type Component, Key, matchesKey, SelectList, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";
import type { ProjectReview } from "prime-agent";
import { plainText, style } from "../style.js";
import { selectListTheme } from "../theme.js";

/** Lines of one item's details shown before "+N more" (the review must fit a terminal). */
export const REVIEW_DETAIL_LINES = 6;

/** What each kind of file does when trusted. */
const KIND_TITLES = {
	mcp: "MCP servers, started as programs (or sent their headers):",
	skill: "a skill package, imported by skills.load:",
	extensions: "extensions, imported into the agent when a session starts:",
	packages: "extension packages, whose extensions and skills load:",
} as const;

const TRUST = "trust";
const SKIP = "skip";

/**
 * The review of a project's code before a session starts: what would run, file by file, then
 * "Trust it and start" or "Start without it". Enter picks; Esc and Ctrl-C start without it.
 * Everything shown comes from the repository, so it is shown as plain text (no escape sequence
 * of a crafted file reaches the terminal).
 */
export class ProjectReviewDialog implements Component {
	private readonly list: SelectList;
	/** Called once with the answer: true to trust the code. */
	onAnswer?: (trusted: boolean) => void;

	constructor(private readonly review: ProjectReview) {
		this.list = new SelectList(
			[
				{ value: TRUST, label: "Trust it and start", description: "approved until one of these files changes" },
				{ value: SKIP, label: "Start without it", description: "asked again next time" },
			],
			2,
			selectListTheme,
		);
		this.list.onSelect = (item) => this.onAnswer?.(item.value === TRUST);
		this.list.onCancel = () => this.onAnswer?.(false);
	}

	invalidate(): void {
		this.list.invalidate();
	}

	handleInput(data: string): void {
		if (matchesKey(data, Key.ctrl("c"))) {
			this.onAnswer?.(false);
			return;
		}
		this.list.handleInput(data);
	}

	render(width: number): string[] {
		const fit = (line: string) => truncateToWidth(line, width);
		const lines = [
			style.bold(style.yellow("This project brings code that Prime Agent would run on your machine.")),
			style.gray(plainText(this.review.root)),
			"",
		];
		for (const item of this.review.items) {
			lines.push(`${style.bold(plainText(item.key))}  ${style.yellow(`(${item.state})`)}`);
			lines.push(style.gray(`  ${KIND_TITLES[item.kind]}`));
			const details = item.details.map((detail) => `    ${plainText(detail).replace(/\n/g, " ")}`);
			lines.push(...details.slice(0, REVIEW_DETAIL_LINES));
			if (details.length > REVIEW_DETAIL_LINES)
				lines.push(style.gray(`    +${details.length - REVIEW_DETAIL_LINES} more in ${plainText(item.key)}`));
		}
		const advice = wrapTextWithAnsi(
			"Trust it only if you trust this repository: it runs with your permissions. Without it, the session starts with none of it (AGENTS.md and SKILL.md texts are still read).",
			width,
		);
		return [...lines.map(fit), "", ...advice, "", ...this.list.render(width)];
	}
}
