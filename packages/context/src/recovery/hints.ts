import type { RecoveryHints } from "./types.js";

const quoted = (text: string) => JSON.stringify(text);

/** Spelling of the model-facing `prime_context` tool. */
export const TOOL_HINTS: RecoveryHints = {
	read: (id, start, end) => `prime_context action=read id=${id} startLine=${start} endLine=${end}`,
	search: ({ id, query, matchOffset, contextLines, maxMatches, limit }) =>
		[
			"prime_context action=search",
			id ? `id=${id}` : "",
			`query=${quoted(query)}`,
			contextLines !== undefined ? `contextLines=${contextLines}` : "",
			matchOffset ? `matchOffset=${matchOffset}` : "",
			maxMatches !== undefined ? `maxMatches=${maxMatches}` : "",
			limit !== undefined ? `limit=${limit}` : "",
		]
			.filter(Boolean)
			.join(" "),
	list: (limit) => `prime_context action=list limit=${limit}`,
};

/** Spelling of the `prime-context` command line. */
export const CLI_HINTS: RecoveryHints = {
	read: (id, start, end) => `prime-context read ${id} ${start}:${end}`,
	search: ({ id, query, matchOffset, contextLines, maxMatches, limit }) =>
		[
			`prime-context search ${id ?? "all"} ${quoted(query)}`,
			contextLines !== undefined ? `--context ${contextLines}` : "",
			matchOffset ? `--offset ${matchOffset}` : "",
			maxMatches !== undefined ? `--max ${maxMatches}` : "",
			limit !== undefined ? `--limit ${limit}` : "",
		]
			.filter(Boolean)
			.join(" "),
	list: (limit) => `prime-context list ${limit}`,
};

/** Spelling of the `/pc` commands inside the agent. */
export const PC_HINTS: RecoveryHints = {
	read: (id, start, end) => `/pc read ${id} ${start}:${end}`,
	search: ({ id, query }) => `/pc search ${id ?? "all"} ${query}`,
	list: (limit) => `/pc list ${limit}`,
};
