import type { AgentTool } from "@mariozechner/pi-agent-core";
import { StringEnum } from "@mariozechner/pi-ai";
import { RECOVERY_LIMITS, type RecoveryResponse } from "prime-agent-context";
import { type Static, Type } from "typebox";

export const PRIME_CONTEXT_TOOL_NAME = "prime_context";

const ids = Type.Array(Type.String());

export const primeContextParameters = Type.Object({
	// A plain string enum, not a union of constants: a wrong action then gives one clear validation line
	// instead of one "must be equal to constant" per alternative.
	action: StringEnum(["list", "read", "search", "status", "update"], {
		description: "What to do: list, read, search, status or update.",
	}),
	id: Type.Optional(Type.String({ description: "Observation id, e.g. obs_000001 (read; search in one observation)." })),
	startLine: Type.Optional(Type.Integer({ description: "read: first line, 1-based." })),
	endLine: Type.Optional(Type.Integer({ description: "read: last line, inclusive." })),
	query: Type.Optional(Type.String({ description: "search: case-insensitive fixed text." })),
	contextLines: Type.Optional(Type.Integer({ description: "search: lines around each match, 0-20 (default 2)." })),
	matchOffset: Type.Optional(Type.Integer({ description: "search: skip this many matches (paging)." })),
	maxMatches: Type.Optional(Type.Integer({ description: "search: at most this many matches (10 at most)." })),
	limit: Type.Optional(
		Type.Integer({ description: "list: how many observations; search without id: newest to search." }),
	),
	focus: Type.Optional(
		Type.Union([Type.String(), Type.Null()], { description: "update: new focus; null or empty clears it." }),
	),
	child: Type.Optional(
		Type.String({ description: "list, read, search: a sub-agent's observations, by its name (from rlm)." }),
	),
	add: Type.Optional(ids),
	complete: Type.Optional(ids),
	pin: Type.Optional(ids),
	unpin: Type.Optional(ids),
});

export type PrimeContextParameters = Static<typeof primeContextParameters>;

export interface PrimeContextToolDetails {
	action: string;
	isError: boolean;
	evidence: boolean;
	truncated: boolean;
}

const DESCRIPTION = `Recover archived tool output and keep the task snapshot. Large results are archived exactly and shown as <prime_context_output> capsules; their hints name the calls to make. Actions: list (limit, at most ${RECOVERY_LIMITS.listMax}); read (id, startLine, endLine: at most ${RECOVERY_LIMITS.readMaxLines} lines); search (query, id or the newest observations, contextLines 0-${RECOVERY_LIMITS.contextLinesMax}, matchOffset, maxMatches up to ${RECOVERY_LIMITS.searchMaxMatches}); status; update (focus, add, complete item ids, pin/unpin observation ids). Responses are at most ${RECOVERY_LIMITS.responseMaxBytes} bytes and say how to page on. In the kernel, \`await prime_context.text(id)\` gives the whole text as a string.`;

/** The model-facing recovery tool; `recover` runs one call with the seed's caps. */
export function createPrimeContextTool(
	recover: (args: Record<string, unknown>) => Promise<RecoveryResponse>,
): AgentTool<typeof primeContextParameters, PrimeContextToolDetails> {
	return {
		name: PRIME_CONTEXT_TOOL_NAME,
		label: "Prime Context",
		description: DESCRIPTION,
		parameters: primeContextParameters,
		async execute(_toolCallId, params) {
			const response = await recover(params as Record<string, unknown>);
			return {
				content: [{ type: "text", text: response.text }],
				details: {
					action: response.action,
					isError: response.isError,
					evidence: response.evidence,
					truncated: response.truncated,
				},
			};
		},
	};
}
