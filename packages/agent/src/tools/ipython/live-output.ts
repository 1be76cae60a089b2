/** Characters of a running cell's latest output that its progress updates carry, at most. */
export const LIVE_OUTPUT_CHARS = 16_384;

/**
 * The latest output of a running cell, for its progress updates: the last `LIVE_OUTPUT_CHARS`
 * characters, after a note of how many came before. An update carries this, never all the output
 * so far: a cell printing 50 MB would otherwise send the whole of it four times a second, to every
 * view of the session (the finished result is the kernel's capped output, not this).
 * Memory stays bounded by twice the limit however small or large the chunks.
 */
export class LiveOutput {
	private chunks: string[] = [];
	/** Characters in `chunks`. */
	private held = 0;
	/** Characters dropped from the front. */
	private dropped = 0;

	push(text: string): void {
		this.chunks.push(text);
		this.held += text.length;
		// Joined only once the held text is twice the limit: each character is copied a bounded number of times.
		if (this.held > 2 * LIVE_OUTPUT_CHARS) {
			const joined = this.chunks.join("");
			const kept = joined.slice(-LIVE_OUTPUT_CHARS);
			this.dropped += joined.length - kept.length;
			this.chunks = [kept];
			this.held = kept.length;
		}
	}

	/** The latest output, with the note of what came before when some did. */
	text(): string {
		let text = this.chunks.join("");
		this.chunks = [text];
		let dropped = this.dropped;
		if (text.length > LIVE_OUTPUT_CHARS) {
			dropped += text.length - LIVE_OUTPUT_CHARS;
			text = text.slice(-LIVE_OUTPUT_CHARS);
		}
		return dropped === 0 ? text : `[… ${dropped.toLocaleString("en-US")} earlier characters]\n${text}`;
	}
}
