import type { Context, Message } from "@mariozechner/pi-ai";
import { wireText } from "prime-agent-test-support/faux-session";
import { expect } from "vitest";

/**
 * The provider's cache property of one agent's requests: each request repeats the previous one's
 * system prompt and messages byte for byte and appends. Prime Context's task snapshot, which the
 * host places last in every request, is not history: it is left out before comparing.
 */
export interface PromptGrowth {
	/** Indexes `i` of the requests whose system prompt differs from request `i - 1`'s. */
	systemPromptChanges: number[];
	/** Requests whose history does not start with the previous request's history. */
	rewrites: { request: number; message: number; before: string; after: string }[];
	/** Indexes `i` of the requests whose trailing task snapshot differs from request `i - 1`'s. */
	snapshotChanges: number[];
	/**
	 * Indexes `i` of the requests that differ from request `i - 1` only by ageing: tool results sent
	 * as Prime Context's one-line stub (`[aged] obs_...`) instead of their content, the rest growing.
	 */
	ageings: number[];
}

const SNAPSHOT_START = "<prime_context_task>";

/**
 * What a provider is sent of one message: its role and content (the host's timestamps, usage and
 * model names never go out), as JSON so that equal means byte-identical.
 */
export function wireView(message: Message): string {
	if (message.role === "toolResult")
		return JSON.stringify({
			role: message.role,
			toolCallId: message.toolCallId,
			toolName: message.toolName,
			content: message.content,
			isError: message.isError,
		});
	return JSON.stringify({ role: message.role, content: message.content });
}

function isSnapshot(message: Message | undefined): boolean {
	return message?.role === "user" && wireText(message).startsWith(SNAPSHOT_START);
}

/** What the property compares of one request: its system prompt, history and trailing snapshot. */
interface RequestView {
	system: string;
	history: string[];
	snapshot: string | undefined;
}

/** A request's history (without a trailing snapshot) and its snapshot's text, if any. */
function split(request: Context): RequestView {
	const messages = request.messages;
	const last = messages[messages.length - 1];
	const trailing = isSnapshot(last);
	return {
		system: request.systemPrompt ?? "",
		history: (trailing ? messages.slice(0, -1) : messages).map(wireView),
		snapshot: trailing ? wireText(last as Message) : undefined,
	};
}

/** Where, in `requests` (one agent's, in order), the prompt changed instead of growing. */
export function promptGrowth(requests: readonly Context[]): PromptGrowth {
	return growthOf(requests.map(split));
}

/**
 * The property over the JSON bodies an Anthropic-messages server received (one agent's, in order).
 * `cache_control` marks are left out (they mark where the provider caches, not what it reads), and
 * a user message whose content is a string reads as its one text block, as the provider reads it.
 */
export function anthropicBodyGrowth(bodies: readonly Record<string, unknown>[]): PromptGrowth {
	return growthOf(
		bodies.map((body) => {
			const messages = (body.messages as WireMessage[]).map(asBlocks);
			const last = messages[messages.length - 1];
			const trailing =
				last?.role === "user" && (last.content as { text?: string }[])[0]?.text?.startsWith(SNAPSHOT_START);
			const view = (value: unknown) =>
				JSON.stringify(value, (key, inner) => (key === "cache_control" ? undefined : inner));
			return {
				system: view(body.system),
				history: (trailing ? messages.slice(0, -1) : messages).map(view),
				snapshot: trailing ? view(last) : undefined,
			};
		}),
	);
}

type WireMessage = { role: string; content: unknown };

function asBlocks(message: WireMessage): WireMessage {
	return typeof message.content === "string"
		? { ...message, content: [{ type: "text", text: message.content }] }
		: message;
}

/** Whether `after` is the tool result `before` sent as an aged stub. */
function isAgeing(before: string, after: string | undefined): boolean {
	if (after === undefined) return false;
	const was = JSON.parse(before) as { role: string; toolCallId?: string; tool_use_id?: string };
	const now = JSON.parse(after) as { role: string; toolCallId?: string; content?: { text?: string }[] };
	return (
		was.role === "toolResult" &&
		now.role === "toolResult" &&
		was.toolCallId === now.toolCallId &&
		now.content?.length === 1 &&
		now.content[0]?.text?.startsWith("[aged] obs_") === true
	);
}

function growthOf(views: readonly RequestView[]): PromptGrowth {
	const growth: PromptGrowth = { systemPromptChanges: [], rewrites: [], snapshotChanges: [], ageings: [] };
	for (let index = 1; index < views.length; index++) {
		const before = views[index - 1] as RequestView;
		const after = views[index] as RequestView;
		if (before.system !== after.system) growth.systemPromptChanges.push(index);
		const differs = before.history.findIndex((message, at) => after.history[at] !== message);
		const onlyAged = before.history.every(
			(message, at) => after.history[at] === message || isAgeing(message, after.history[at]),
		);
		if (differs >= 0 && onlyAged) growth.ageings.push(index);
		else if (differs >= 0)
			growth.rewrites.push({
				request: index,
				message: differs,
				before: before.history[differs] as string,
				after: after.history[differs] ?? "(missing)",
			});
		if (before.snapshot !== undefined && after.snapshot !== undefined && before.snapshot !== after.snapshot)
			growth.snapshotChanges.push(index);
	}
	return growth;
}

/**
 * Asserts the property over `requests`: the system prompt changes exactly at `boundaries.system`
 * and the history is rewritten exactly at `boundaries.history` (request indexes where the session
 * recorded a boundary: a compaction, a harness or model change) and aged exactly at
 * `boundaries.aged` (where Prime Context recorded an ageing); everywhere else it only grows.
 * A failure shows the first rewritten message, before and after.
 */
export function expectPromptOnlyGrows(
	requests: readonly Context[],
	boundaries: { system?: number[]; history?: number[]; aged?: number[] } = {},
): PromptGrowth {
	const growth = promptGrowth(requests);
	expect(growth.ageings, "requests where old tool results became aged stubs").toEqual(boundaries.aged ?? []);
	expect(
		growth.rewrites.map((rewrite) => rewrite.request),
		describeRewrites(growth),
	).toEqual(boundaries.history ?? []);
	expect(growth.systemPromptChanges, describeSystemChanges(requests, growth)).toEqual(boundaries.system ?? []);
	return growth;
}

function describeRewrites(growth: PromptGrowth): string {
	const first = growth.rewrites[0];
	if (!first) return "history only grows";
	return `request ${first.request} rewrote message ${first.message}:\nbefore: ${first.before.slice(0, 400)}\nafter:  ${first.after.slice(0, 400)}`;
}

function describeSystemChanges(requests: readonly Context[], growth: PromptGrowth): string {
	const at = growth.systemPromptChanges[0];
	if (at === undefined) return "system prompt unchanged";
	const before = requests[at - 1]?.systemPrompt ?? "";
	const after = requests[at]?.systemPrompt ?? "";
	let common = 0;
	while (common < before.length && before[common] === after[common]) common++;
	return `request ${at}'s system prompt differs from character ${common}:\nbefore: ${before.slice(common, common + 300)}\nafter:  ${after.slice(common, common + 300)}`;
}

/**
 * The share of the bytes sent after the first request that repeat the previous request's prefix
 * (system prompt, then messages in order, up to the first difference): what a provider's prompt
 * cache can bill at its cached rate. The first request is left out (nothing is cached before it).
 */
export function cachedShare(requests: readonly Context[]): { cached: number; total: number; share: number } {
	let cached = 0;
	let total = 0;
	for (let index = 1; index < requests.length; index++) {
		const previous = requests[index - 1] as Context;
		const current = requests[index] as Context;
		const sent = [current.systemPrompt ?? "", ...current.messages.map(wireView)];
		const before = [previous.systemPrompt ?? "", ...previous.messages.map(wireView)];
		let same = 0;
		while (same < sent.length && sent[same] === before[same]) same++;
		for (const [at, part] of sent.entries()) {
			total += part.length;
			if (at < same) cached += part.length;
		}
	}
	return { cached, total, share: total === 0 ? 0 : cached / total };
}
