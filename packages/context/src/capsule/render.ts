import type { ObservationSource } from "../types.js";
import { escapeXmlAttribute, escapeXmlText, utf8Bytes } from "./escape.js";
import { type ExcerptLine, packExcerpt } from "./pack.js";

/** The envelope's attributes. */
export interface CapsuleHeader {
	id: string;
	tool: string;
	bytes: number;
	lines: number;
	source: ObservationSource;
}

/** Everything a capsule says, before it is fitted into its budget. */
export interface CapsuleParts {
	header: CapsuleHeader;
	/** First line, e.g. "Large output archived locally. The excerpt below is incomplete." */
	notice: string;
	/** Used instead of `notice` when no excerpt fits. */
	recoveryOnlyNotice?: string;
	/** Outcome and status lines (plain text; escaped here). */
	status: string[];
	/** The failure messages (`failureMessageBlock`): rendered and escaped already; shown before the failing ids. */
	messages?: readonly string[];
	/** The failing-test block (`failingIdsBlock`): kept whole, even past the budget (see `renderCapsule`). */
	failingIds?: readonly string[];
	/** Excerpt candidates with their original line numbers. */
	excerpt?: readonly ExcerptLine[];
	maxLineBytes?: number;
	/** Lines after the excerpt: recovery hints or advice (plain text; escaped here). */
	footer: string[];
}

export interface RenderedCapsule {
	text: string;
	/** Line numbers shown in the excerpt. */
	excerptLines: number[];
	/** No excerpt fitted next to the fixed metadata. */
	recoveryOnly: boolean;
}

/** Less room than this for an excerpt and the capsule drops to its recovery-only form. */
const MIN_EXCERPT_BYTES = 64;

export function openTag(header: CapsuleHeader): string {
	return (
		`<prime_context_output id="${escapeXmlAttribute(header.id)}" tool="${escapeXmlAttribute(header.tool)}"` +
		` bytes="${header.bytes}" lines="${header.lines}" source="${header.source}">`
	);
}

export const CLOSE_TAG = "</prime_context_output>";

function block(lines: readonly string[]): string {
	return lines.map((line) => `${escapeXmlText(line)}\n`).join("");
}

/**
 * Fits a capsule into `budget` bytes: the fixed parts (envelope, notice, status, failure messages,
 * failing ids, footer) first, then as much excerpt as the rest allows. When the rest is too small for any
 * excerpt, the compact recovery-only form is used. The budget is never exceeded, with one
 * deliberate exception: the failing-test block is kept whole, so a run with more failing ids than
 * the budget holds gets a capsule up to the block's own ceiling (see `buildStructuredCapsule`).
 */
export function renderCapsule(parts: CapsuleParts, budget: number): RenderedCapsule {
	const open = `${openTag(parts.header)}\n`;
	const fixedTail = block(parts.footer) + CLOSE_TAG;
	const messages = (parts.messages ?? []).map((line) => `${line}\n`).join("");
	const middle = block(parts.status) + messages + block(parts.failingIds ?? []);
	const withNotice = (notice: string) => open + block([notice]) + middle;
	const head = withNotice(parts.notice);
	const room = budget - utf8Bytes(head) - utf8Bytes(fixedTail);
	const candidates = parts.excerpt ?? [];
	if (candidates.length > 0 && room >= MIN_EXCERPT_BYTES) {
		const packed = packExcerpt(candidates, { budget: room, maxLineBytes: parts.maxLineBytes ?? 256 });
		if (packed.lines.length > 0) {
			return { text: head + packed.text + fixedTail, excerptLines: packed.lines, recoveryOnly: false };
		}
	}
	if (candidates.length === 0) return { text: head + fixedTail, excerptLines: [], recoveryOnly: false };
	const compact = withNotice(parts.recoveryOnlyNotice ?? parts.notice);
	return { text: compact + fixedTail, excerptLines: [], recoveryOnly: true };
}
