import { type CapsuleHeader, CLOSE_TAG, escapeXmlText, openTag } from "../capsule/index.js";
import { type LineDelta, lineDeltaText } from "./line-delta.js";
import { type SectionDelta, sectionDeltaText } from "./sections.js";

function envelope(header: CapsuleHeader, body: readonly string[]): string {
	return `${openTag(header)}\n${body.map((line) => `${escapeXmlText(line)}\n`).join("")}${CLOSE_TAG}`;
}

/** An exact repeat of an earlier observation. `status` keeps errors and failures visible as such. */
export function renderUnchangedDelta(
	header: CapsuleHeader,
	earlier: { id: string; tool: string },
	status: readonly string[],
): string {
	const tool = earlier.tool === header.tool ? "" : ` (returned by ${earlier.tool})`;
	return envelope(header, [
		`UNCHANGED: this output is byte-for-byte identical to ${earlier.id}${tool}; it is archived and not repeated here.`,
		...status,
	]);
}

/**
 * The same outcome as an earlier run of the same tool, e.g. `TEST_RESULT PASS 9/9 unchanged since
 * obs_000004`: same counts, failing ids, and failure, exception, error and location lines (durations
 * and clock times aside). `failingIds` is the failing-test block (`failingIdsBlock`), still shown.
 */
export function renderOutcomeDelta(
	header: CapsuleHeader,
	earlierId: string,
	headline: string,
	details: readonly string[],
	failingIds: readonly string[],
): string {
	return envelope(header, [
		`${headline} unchanged since ${earlierId}`,
		"Same outcome as that run and the same lines from its first failure, exception, error or location line on (durations, clock times, addresses and temp paths aside); the full output is archived.",
		...details,
		...failingIds,
	]);
}

/** A changed document: only its changed sections, as unified-diff hunks against the earlier observation. */
export function renderLineDelta(
	header: CapsuleHeader,
	earlierId: string,
	delta: LineDelta,
	status: readonly string[],
): string {
	return envelope(header, [
		`CHANGED SECTION: compared with ${earlierId}, ${delta.addedLines} line(s) added and ${delta.removedLines} removed; every other line is identical. Hunks use that observation's line numbers (-) and this one's (+).`,
		...status,
		...lineDeltaText(delta),
	]);
}

/** Composite output: novel lines in full, exact earlier sections replaced by unchanged-section markers. */
export function renderSectionDelta(header: CapsuleHeader, delta: SectionDelta, status: readonly string[]): string {
	const sections = delta.parts.filter((p) => p.kind === "same").length;
	return envelope(header, [
		`CHANGED SECTION: ${sections} section(s) identical to earlier observations are replaced by markers; all other lines are shown in full with their line numbers.`,
		...status,
		...sectionDeltaText(delta),
	]);
}
