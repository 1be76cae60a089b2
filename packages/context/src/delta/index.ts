/**
 * Deltas by exact content comparison (never hashes): unchanged repeats, unchanged outcomes,
 * changed document sections and composite output with unchanged-section markers. A delta never
 * drops novel output.
 */
export { alignLines, type Segment, splitLines } from "./align.js";
export { sameFailureDetail } from "./detail.js";
export {
	type Hunk,
	type HunkLine,
	type LineDelta,
	type LineDeltaOptions,
	lineDelta,
	lineDeltaText,
} from "./line-delta.js";
export { renderLineDelta, renderOutcomeDelta, renderSectionDelta, renderUnchangedDelta } from "./render.js";
export {
	type EarlierText,
	type SectionDelta,
	type SectionDeltaOptions,
	type SectionPart,
	sectionDelta,
	sectionDeltaText,
	sharedLineBytes,
} from "./sections.js";
