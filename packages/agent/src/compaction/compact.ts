import type { AgentMessage } from "@mariozechner/pi-agent-core";
import { type Api, completeSimple, type Model } from "@mariozechner/pi-ai";
import { UserError } from "../errors.js";
import type { CompactionPreparation, CompactionReason, ExtensionRunner } from "../extensions/index.js";
import {
	type CompactionEntry,
	compactionBoundary,
	entryToMessage,
	type Session,
	type SessionEntry,
} from "../session/index.js";
import type { SessionKernel } from "../tools/index.js";
import { findCutPoint } from "./cut-point.js";
import { collectFileActivity, type FileActivity, formatFileActivity } from "./file-tracking.js";
import { IPYTHON_STATE_TYPE, ipythonStateMessage, listKernelNames } from "./kernel-state.js";
import { answerReserve, fitOutputToWindow } from "./output-budget.js";
import {
	SUMMARIZER_SYSTEM_PROMPT,
	serializeConversation,
	summaryRequest,
	turnPrefixRequest,
} from "./summary-prompt.js";
import { contextTokens, requestTokens } from "./tokens.js";

/** `compaction` in settings.json. */
export interface CompactionSettings {
	/** Compact automatically when the context nears the window. Default true. */
	enabled: boolean;
	/** Room left for the answer: compaction triggers above `contextWindow - reserveTokens`. */
	reserveTokens: number;
	/** Recent tokens kept verbatim. */
	keepRecentTokens: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = {
	enabled: true,
	reserveTokens: 16384,
	keepRecentTokens: 20000,
};

/**
 * What compaction works with on one model: the trigger and the recent part kept verbatim, both
 * clamped to the window. Without the clamp a small window (the 20,000 kept tokens do not fit
 * under `contextWindow - reserveTokens` below ~36K) never settles: the compacted context is still
 * above the trigger, so every turn compacts again with a new summary call.
 */
export interface CompactionBudget {
	/** Compact when the context holds more than this many tokens. */
	threshold: number;
	/** Recent tokens kept verbatim: at most half of the room under the trigger, leaving the rest for the summary. */
	keepRecentTokens: number;
}

export function compactionBudget(settings: CompactionSettings, contextWindow: number): CompactionBudget {
	const threshold = contextWindow - answerReserve(settings, contextWindow);
	return { threshold, keepRecentTokens: Math.min(settings.keepRecentTokens, Math.floor(threshold / 2)) };
}

/** The automatic trigger: `contextTokens > contextWindow - reserveTokens` (see `compactionBudget`). */
export function shouldCompact(tokens: number, contextWindow: number, settings: CompactionSettings): boolean {
	return settings.enabled && tokens > compactionBudget(settings, contextWindow).threshold;
}

/** Kept in the compaction entry's details so the next compaction carries the file lists forward. */
export interface CompactionDetails extends FileActivity {
	/** Kernel names listed in the `<ipython_state>` message. */
	kernelNames?: string[];
}

export interface PreparedCompaction {
	preparation: CompactionPreparation;
	/** Index in the branch of the first kept entry. */
	firstKeptIndex: number;
}

/**
 * What to summarise and what to keep. Undefined when nothing before the kept part is left to
 * summarise (the recent part alone is under `keepRecentTokens`, or the last compaction is recent).
 */
export function prepareCompaction(
	branch: readonly SessionEntry[],
	settings: CompactionSettings,
	contextWindow: number,
): PreparedCompaction | undefined {
	const { compaction: previous, start: boundaryStart } = compactionBoundary(branch);
	const keep = compactionBudget(settings, contextWindow).keepRecentTokens;
	const cut = findCutPoint(branch, boundaryStart, branch.length, keep);
	if (cut.firstKeptIndex <= boundaryStart) return undefined;
	const toMessages = (from: number, to: number) =>
		branch
			.slice(from, to)
			.map(entryToMessage)
			.filter((message): message is AgentMessage => message !== undefined);
	// A split turn with nothing before it is simply the part to summarise.
	const before = cut.turnStartIndex >= 0 ? toMessages(boundaryStart, cut.turnStartIndex) : [];
	const split = before.length > 0;
	const messagesToSummarize = split ? before : toMessages(boundaryStart, cut.firstKeptIndex);
	const turnPrefixMessages = split ? toMessages(cut.turnStartIndex, cut.firstKeptIndex) : [];
	const previousFiles = previous?.details as Partial<FileActivity> | undefined;
	const files = collectFileActivity([...messagesToSummarize, ...turnPrefixMessages], {
		readFiles: Array.isArray(previousFiles?.readFiles) ? previousFiles.readFiles : [],
		modifiedFiles: Array.isArray(previousFiles?.modifiedFiles) ? previousFiles.modifiedFiles : [],
	});
	const firstKept = branch[cut.firstKeptIndex] as SessionEntry;
	return {
		firstKeptIndex: cut.firstKeptIndex,
		preparation: {
			messagesToSummarize,
			turnPrefixMessages,
			firstKeptEntryId: firstKept.id,
			tokensBefore: 0,
			previousSummary: previous?.summary,
			readFiles: files.readFiles,
			modifiedFiles: files.modifiedFiles,
		},
	};
}

export interface CompactOptions {
	session: Session;
	model: Model<Api>;
	apiKey: string;
	kernel?: SessionKernel;
	extensions?: ExtensionRunner;
	settings: CompactionSettings;
	reason: CompactionReason;
	customInstructions?: string;
	signal?: AbortSignal;
	/** Called once there is something to summarise, before extensions and the summariser run. */
	onStart?: () => void;
}

export type CompactResult =
	| { status: "compacted"; entry: CompactionEntry; kernelNames?: string[] }
	| { status: "nothing"; message: string }
	| { status: "cancelled"; message: string };

/**
 * Compact the session's active branch: summarise everything before the kept recent part (a
 * split turn's prefix apart), append the compaction entry, then a hidden `<ipython_state>`
 * message when the kernel has run. The kernel itself is never touched beyond listing its names.
 * Throws when the summariser fails; the session is then unchanged.
 */
export async function compactSession(options: CompactOptions): Promise<CompactResult> {
	const { session, settings } = options;
	const prepared = prepareCompaction(session.branch(), settings, options.model.contextWindow);
	if (!prepared) {
		return { status: "nothing", message: "Nothing to compact: the recent conversation is all kept verbatim." };
	}
	options.onStart?.();
	const messages = session.context().messages;
	const preparation = { ...prepared.preparation, tokensBefore: contextTokens(messages) };
	let fromExtension: string | undefined;
	let cancelled: string | undefined;
	if (options.extensions) {
		const threshold = compactionBudget(settings, options.model.contextWindow).threshold;
		await options.extensions.emit(
			"before_compact",
			{ preparation, customInstructions: options.customInstructions, reason: options.reason, threshold, messages },
			(result, payload) => {
				if (result?.cancel) cancelled = result.reason || "An extension cancelled the compaction.";
				else if (typeof result?.summary === "string") fromExtension = result.summary;
				else return payload;
				return "stop";
			},
		);
	}
	if (cancelled !== undefined) return { status: "cancelled", message: cancelled };
	const listing = options.kernel ? await listKernelNames(options.kernel) : undefined;
	const kernelNames = listing?.names?.map((entry) => entry.name);
	let summary = fromExtension;
	if (summary === undefined) {
		const summarize = (text: string) => requestSummary(options, text);
		const main = await summarize(
			summaryRequest({
				conversation: serializeConversation(preparation.messagesToSummarize),
				previousSummary: preparation.previousSummary,
				customInstructions: options.customInstructions,
				kernelNames,
			}),
		);
		summary = main;
		if (preparation.turnPrefixMessages.length > 0) {
			const prefix = await summarize(turnPrefixRequest(serializeConversation(preparation.turnPrefixMessages)));
			summary = `${main}\n\n---\n\n**Turn context (split turn):**\n\n${prefix}`;
		}
	}
	const files = formatFileActivity(preparation);
	const details: CompactionDetails = {
		readFiles: preparation.readFiles,
		modifiedFiles: preparation.modifiedFiles,
		...(kernelNames ? { kernelNames } : {}),
	};
	const id = session.append({
		type: "compaction",
		summary: files ? `${summary}\n\n${files}` : summary,
		firstKeptEntryId: preparation.firstKeptEntryId,
		tokensBefore: preparation.tokensBefore,
		details,
	});
	if (listing) {
		session.append({
			type: "custom_message",
			customType: IPYTHON_STATE_TYPE,
			content: ipythonStateMessage(listing),
			display: false,
		});
	}
	const entry = session.entry(id) as CompactionEntry;
	await options.extensions?.emit("compact", { entry, fromExtension: fromExtension !== undefined });
	return { status: "compacted", entry, kernelNames };
}

async function requestSummary(options: CompactOptions, text: string): Promise<string> {
	const message = { role: "user" as const, content: [{ type: "text" as const, text }], timestamp: Date.now() };
	// The summary's own request is sized to the window too: its prompt is most of what is compacted.
	const model = fitOutputToWindow(options.model, requestTokens([message], SUMMARIZER_SYSTEM_PROMPT), options.settings);
	const response = await completeSimple(
		model,
		{ systemPrompt: SUMMARIZER_SYSTEM_PROMPT, messages: [message] },
		{
			apiKey: options.apiKey,
			maxTokens: Math.min(Math.floor(options.settings.reserveTokens * 0.8), model.maxTokens),
			signal: options.signal,
		},
	);
	if (response.stopReason === "error" || response.stopReason === "aborted") {
		throw new Error(`The summary request failed: ${response.errorMessage ?? response.stopReason}`);
	}
	const summary = response.content
		.filter((part) => part.type === "text")
		.map((part) => part.text)
		.join("")
		.trim();
	if (!summary) throw new Error("The summary request returned no text.");
	return summary;
}

/**
 * `compaction` from settings.json (`enabled`, `reserveTokens`, `keepRecentTokens`), defaults for
 * what is missing. A wrong type is an error naming the key, never silently ignored.
 */
export function compactionSettingsFrom(raw: unknown, file: string): CompactionSettings {
	if (raw === undefined) return { ...DEFAULT_COMPACTION_SETTINGS };
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		throw new UserError(
			`"compaction" in ${file} must be an object.`,
			'Write it as {"compaction": {"keepRecentTokens": 20000}} or remove it.',
		);
	}
	const value = raw as Record<string, unknown>;
	const settings = { ...DEFAULT_COMPACTION_SETTINGS };
	if (value.enabled !== undefined) {
		if (typeof value.enabled !== "boolean") {
			throw new UserError(`"compaction.enabled" in ${file} must be true or false.`, "Fix the value and retry.");
		}
		settings.enabled = value.enabled;
	}
	for (const key of ["reserveTokens", "keepRecentTokens"] as const) {
		if (value[key] === undefined) continue;
		const number = value[key];
		if (typeof number !== "number" || !Number.isInteger(number) || number < 0) {
			throw new UserError(
				`"compaction.${key}" in ${file} must be a whole number of tokens.`,
				"Fix the value and retry.",
			);
		}
		settings[key] = number;
	}
	return settings;
}
