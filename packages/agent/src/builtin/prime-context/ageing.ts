/**
 * Ageing inside the agent: which tool results are sent as their one-line stub. The aged set is
 * session state: each ageing is a `prime_context_ageing` entry on the branch, so a resume, a fork
 * or `--at` sends the same bytes as the session did at that point. A tool result can be aged when
 * the broker archived it (its id is kept in the result's details) and it is text only.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { ToolResultMessage } from "@mariozechner/pi-ai";
import {
	type AgeingItem,
	type AgeingPlan,
	CACHE_LIFETIME_MS,
	type CachePrices,
	estimateRemainingCalls,
	planAgeing,
	renderAgedStub,
} from "prime-agent-context";
import { estimateTokens } from "../../compaction/index.js";
import type { SessionEntry } from "../../extensions/api.js";

export const AGEING_ENTRY_TYPE = "prime_context_ageing";
/** Where a tool result's details keep what the broker archived it as. */
export const DETAILS_KEY = "primeContext";
/** An observation whose id the model named in this many latest calls is never aged. */
export const READ_BACK_CALLS = 3;

/** What a tool result's `details[DETAILS_KEY]` holds. */
export interface ArchivedAs {
	id: string;
	bytes: number;
	lines: number;
	headline: string | null;
}

/** One ageing boundary, as recorded on the branch. */
export interface AgeingRecord {
	aged: { toolCallId: string; id: string }[];
	reason: NonNullable<AgeingPlan["reason"]>;
	/** Estimated tokens (characters / 4) no longer sent on each call. */
	removedTokens: number;
	rebilledTokens: number;
}

/** The details of a tool result with what the broker archived it as added. */
export function withArchivedAs(details: unknown, archived: ArchivedAs): Record<string, unknown> {
	const base = typeof details === "object" && details !== null && !Array.isArray(details) ? details : {};
	return { ...(base as Record<string, unknown>), [DETAILS_KEY]: archived };
}

/** The ageing records on `branch`, oldest first (malformed entries are skipped: the file is untrusted). */
export function ageingRecords(branch: readonly SessionEntry[]): AgeingRecord[] {
	return branch.flatMap((entry) =>
		entry.type === "custom" && entry.customType === AGEING_ENTRY_TYPE && isRecord(entry.data) ? [entry.data] : [],
	);
}

/** The tool calls whose results are aged on `branch`. */
export function agedOn(branch: readonly SessionEntry[]): Set<string> {
	return new Set(ageingRecords(branch).flatMap((record) => record.aged.map((aged) => aged.toolCallId)));
}

/**
 * The messages as sent: each aged tool result replaced by its stub. The stub depends only on the
 * result and its tool call, so it is the same bytes on every call. Returns `messages` itself when
 * nothing is aged.
 */
export function applyAgeing(messages: AgentMessage[], aged: ReadonlySet<string>): AgentMessage[] {
	if (aged.size === 0) return messages;
	const calls = toolCalls(messages);
	let changed = false;
	const out = messages.map((message) => {
		const archived = ageable(message);
		if (!archived || !aged.has(archived.message.toolCallId)) return message;
		changed = true;
		const stub = stubOf(archived.message, archived.as, calls.get(archived.message.toolCallId));
		return { ...archived.message, content: [{ type: "text" as const, text: stub }] };
	});
	return changed ? out : messages;
}

export interface AgeingOptions {
	prices: CachePrices | null;
	window: number;
	/** Calls of the session so far (every assistant message on the branch). */
	callsSoFar: number;
	cacheCold: boolean;
	force?: boolean;
}

/**
 * The plan for this call over `messages` (already sent through `applyAgeing`), with the tool call
 * and archive id of each observation it would age.
 */
export function planFor(
	messages: AgentMessage[],
	aged: ReadonlySet<string>,
	options: AgeingOptions,
): { plan: AgeingPlan; record: AgeingRecord | null } {
	const calls = toolCalls(messages);
	const readBack = namedLately(messages);
	const at = new Map<number, { toolCallId: string; id: string }>();
	const items: AgeingItem[] = messages.map((message, index) => {
		const archived = ageable(message);
		if (!archived) return { tokens: estimateTokens(message) };
		const { message: result, as } = archived;
		const call = calls.get(result.toolCallId);
		at.set(index, { toolCallId: result.toolCallId, id: as.id });
		const command = commandOf(call);
		return {
			tokens: estimateTokens(message),
			observation: {
				stubTokens: Math.ceil(stubOf(result, as, call).length / 4),
				aged: aged.has(result.toolCallId),
				testCommand: as.headline?.startsWith("TEST_RESULT") && command ? command.trim() : null,
				readBack: readBack.has(as.id),
			},
		};
	});
	const lastAssistant = messages.findLastIndex((message) => message.role === "assistant");
	const plan = planAgeing({
		items,
		prices: options.prices,
		cachedItems: Math.max(0, lastAssistant),
		remainingCalls: estimateRemainingCalls(options.callsSoFar),
		cacheCold: options.cacheCold,
		window: options.window,
		force: options.force,
	});
	if (plan.age.length === 0 || plan.reason === null) return { plan, record: null };
	const record: AgeingRecord = {
		aged: plan.age.map((index) => at.get(index) as { toolCallId: string; id: string }),
		reason: plan.reason,
		removedTokens: plan.removedTokens,
		rebilledTokens: plan.rebilledTokens,
	};
	return { plan, record };
}

/**
 * Whether the provider holds nothing of this prompt: a compaction or a model change since the last
 * answer, or an answer older than the cache's lifetime.
 */
export function cacheIsCold(branch: readonly SessionEntry[], now: number): boolean {
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index] as SessionEntry;
		if (entry.type === "compaction" || entry.type === "model_change") return true;
		if (entry.type === "message" && entry.message.role === "assistant") {
			return now - entry.message.timestamp > CACHE_LIFETIME_MS;
		}
	}
	return false;
}

/** Estimated tokens removed by ageing entries recorded after the newest answer (not yet in any reported usage). */
export function removedSinceLastAnswer(branch: readonly SessionEntry[]): number {
	let removed = 0;
	for (let index = branch.length - 1; index >= 0; index--) {
		const entry = branch[index] as SessionEntry;
		if (entry.type === "message" && entry.message.role === "assistant") break;
		if (entry.type === "custom" && entry.customType === AGEING_ENTRY_TYPE && isRecord(entry.data))
			removed += entry.data.removedTokens;
	}
	return removed;
}

/** A tool result the broker archived, text only, with what it was archived as. */
function ageable(message: AgentMessage): { message: ToolResultMessage; as: ArchivedAs } | null {
	if (message.role !== "toolResult") return null;
	const as = (message.details as Record<string, unknown> | undefined)?.[DETAILS_KEY];
	if (!isArchivedAs(as)) return null;
	if (!message.content.every((part) => part.type === "text")) return null;
	return { message, as };
}

type ToolCall = { name: string; arguments: Record<string, unknown> };

function toolCalls(messages: AgentMessage[]): Map<string, ToolCall> {
	const calls = new Map<string, ToolCall>();
	for (const message of messages) {
		if (message.role !== "assistant") continue;
		for (const part of message.content) if (part.type === "toolCall") calls.set(part.id, part);
	}
	return calls;
}

/** The code or command a tool call ran, when it has one. */
function commandOf(call: ToolCall | undefined): string | null {
	const value = call?.arguments.code ?? call?.arguments.command;
	return typeof value === "string" ? value : null;
}

function stubOf(result: ToolResultMessage, as: ArchivedAs, call: ToolCall | undefined): string {
	return renderAgedStub({ ...as, tool: result.toolName, command: commandOf(call) });
}

/** Observation ids named in the tool calls of the latest `READ_BACK_CALLS` answers. */
function namedLately(messages: AgentMessage[]): Set<string> {
	const named = new Set<string>();
	let answers = 0;
	for (let index = messages.length - 1; index >= 0 && answers < READ_BACK_CALLS; index--) {
		const message = messages[index] as AgentMessage;
		if (message.role !== "assistant") continue;
		answers++;
		for (const part of message.content) {
			if (part.type !== "toolCall") continue;
			for (const id of JSON.stringify(part.arguments).match(/obs_\d+/g) ?? []) named.add(id);
		}
	}
	return named;
}

function isArchivedAs(value: unknown): value is ArchivedAs {
	const as = value as ArchivedAs | undefined;
	return (
		typeof as === "object" &&
		as !== null &&
		typeof as.id === "string" &&
		/^obs_\d+$/.test(as.id) &&
		Number.isSafeInteger(as.bytes) &&
		Number.isSafeInteger(as.lines) &&
		(as.headline === null || typeof as.headline === "string")
	);
}

function isRecord(value: unknown): value is AgeingRecord {
	const record = value as AgeingRecord | undefined;
	return (
		typeof record === "object" &&
		record !== null &&
		Array.isArray(record.aged) &&
		record.aged.every((aged) => typeof aged?.toolCallId === "string" && typeof aged.id === "string") &&
		typeof record.removedTokens === "number"
	);
}
