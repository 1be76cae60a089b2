/**
 * What libraries print to the console on their own, which a user would read as this program's
 * words: the OpenAI SDK prints a streamed reply it cannot parse (`Could not parse message into
 * JSON:` with the data, then `From chunk:` with the raw lines) before it throws the error that the
 * run then reports, saying what to do. In the terminal UI such lines would also tear the screen.
 */
const LIBRARY_NOISE: ReadonlySet<string> = new Set(["Could not parse message into JSON:", "From chunk:"]);

/** Drops the library lines above from `console.error`; everything else passes as before. */
export function quietLibraryNoise(): void {
	const original = console.error.bind(console);
	console.error = (...args: unknown[]) => {
		if (typeof args[0] === "string" && LIBRARY_NOISE.has(args[0])) return;
		original(...args);
	};
}
