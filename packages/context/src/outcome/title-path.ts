/** Levels of a title path at most (deeper headings are not remembered: their tests keep a shorter path). */
const MAX_DEPTH = 16;

/**
 * The groups a test is nested in, read from headings printed as indented lines (node's spec reporter:
 * `▶ suite` at two columns per level, each test under it indented deeper). A heading holds every
 * line indented deeper than itself, up to its own closing line at its own indent or the next line
 * indented as little; a test's path is the headings that hold its line. Bounded: `MAX_DEPTH` levels.
 */
export class TitlePath {
	private readonly levels: { indent: number; title: string }[] = [];

	/** A group's heading at `indent` columns: it closes every group it is not nested in. */
	open(indent: number, title: string): void {
		this.leave(indent);
		if (this.levels.length < MAX_DEPTH) this.levels.push({ indent, title });
	}

	/**
	 * A result line at `indent` columns naming `title`: true when it closes the group of that heading
	 * (a suite's own result line, at its heading's indent), false for a test. Either way the groups
	 * the line is not nested in are closed.
	 */
	closes(indent: number, title: string): boolean {
		this.leave(indent + 1);
		const last = this.levels[this.levels.length - 1];
		const own = last !== undefined && last.indent === indent && last.title === title;
		this.leave(indent);
		return own;
	}

	/** The titles of the open groups, outermost first (after `closes`: those of a test on that line). */
	titles(): string[] {
		return this.levels.map((level) => level.title);
	}

	/** Closes the groups at `indent` columns or deeper. */
	private leave(indent: number): void {
		while (this.levels.length > 0 && this.levels[this.levels.length - 1].indent >= indent) this.levels.pop();
	}
}
