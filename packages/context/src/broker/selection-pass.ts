import { DEFAULT_SELECTOR_LIMITS, LineSelector, type Selection } from "../capsule/index.js";
import { isDiffTarget, noteShaped, type ShapedLines, visibleLine } from "../outcome/index.js";
import { LineSplitter } from "./source.js";

/** What selecting an observation's lines learns. */
export interface SelectedLines {
	selection: Selection;
	/** The shaped lines the outcome scanner needs when it does not classify lines itself. */
	shaped: ShapedLines;
	lines: number;
}

/**
 * The line selection of one observation, fed its chunks in order: what `scanObservation` does besides
 * the outcome scan and the archive, so it can run on a thread of its own (`selection-thread.ts`).
 * The shaped lines are noted from the selector's kinds as the outcome scanner notes them from the
 * same kinds: a hunk's lines are plain to the selector, and a diff's `+++ ` line is left out here as
 * the scanner leaves it out.
 */
export class SelectionPass {
	private readonly selector: LineSelector;
	private readonly splitter: LineSplitter;
	private readonly shaped: ShapedLines = { failure: 0, error: 0 };

	constructor(copyKept: boolean) {
		const selector = new LineSelector(DEFAULT_SELECTOR_LIMITS, copyKept);
		const shaped = this.shaped;
		this.selector = selector;
		this.splitter = new LineSplitter((text, lineNo, bytes) => {
			const kind = selector.line(text, lineNo, bytes);
			if ((kind === "failure" || kind === "exception" || kind === "error") && !isDiffTarget(visibleLine(text))) {
				noteShaped(shaped, kind, lineNo);
			}
		});
	}

	push(chunk: Buffer): void {
		this.splitter.push(chunk);
	}

	finish(): SelectedLines {
		const lines = this.splitter.end();
		return { selection: this.selector.finish(), shaped: this.shaped, lines };
	}
}
