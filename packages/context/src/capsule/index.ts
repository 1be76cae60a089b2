/**
 * Capsules: what the model sees instead of a large output. Selection of decisive lines in bounded
 * memory, packing of whole escaped lines with their original numbers into a byte budget, and the
 * `<prime_context_output>` envelope with true recovery hints.
 *
 * A capsule reads, in order: the notice; status lines (`TEST_RESULT ...` / `COMMAND_RESULT ...`,
 * `TOOL_ERROR`, `EXCEPTIONS: ...`); `LOCATIONS (N in F files; each line is path:line,line,... under
 * <dir>/):` then one row per file, `path:12,40,77` (that file's lines, ascending; paths relative to
 * `<dir>` when stated), most decisive files first, and a `(+N more locations ...)` note when cut;
 * in a failing capsule, `FIRST_FAILURE:` (the first failure's message and location, `N: text`) and
 * `OTHER_FAILURE_MESSAGES` (one example of each other message; see `FailureMessages`);
 * `FAILING_TESTS (N, all listed):` one id per line (past a ceiling of 4x the budget: as many as fit,
 * then the rest counted per file with the search that lists them, a quarter of the overflowing room
 * going to the locations instead); excerpt lines `N: text`; the recovery hints. Everything but the
 * failing-id block fits the budget; the failure messages never cost an id that fits the ceiling.
 */
export {
	type CapsuleBudgets,
	CLEAN_CAPSULE_BYTES,
	COMPACT_CAPSULE_BYTES,
	capsuleBudgets,
	contextScale,
	MEDIUM_RESULT_BYTES,
	MIN_CAPSULE_BYTES,
} from "./budget.js";
export {
	buildStructuredCapsule,
	type CapsuleKind,
	chooseSearchQuery,
	FAILING_IDS_CEILING,
	hasDecisiveDiagnostic,
	REST_BY_FILE,
	recoveryHints,
	restSearchHints,
	type StructuredCapsule,
	type StructuredCapsuleInput,
} from "./build.js";
export { escapedPrefix, escapeXmlAttribute, escapeXmlText, unescapeXmlText, utf8Bytes } from "./escape.js";
export { failingIdsBlock, fileOfId } from "./failing-block.js";
export { compactFailingIds } from "./failing-ids.js";
export { type FailureMessage, FailureMessages, failureMessageBlock } from "./failure-messages.js";
export { type LocationRank, locationLines, rankLocations } from "./locations.js";
export { type ExcerptLine, type PackedExcerpt, type PackOptions, packExcerpt, renderExcerptLine } from "./pack.js";
export {
	type CapsuleHeader,
	type CapsuleParts,
	CLOSE_TAG,
	openTag,
	type RenderedCapsule,
	renderCapsule,
} from "./render.js";
export {
	DEFAULT_SELECTOR_LIMITS,
	EVIDENCE_KINDS,
	type KeptLine,
	LineSelector,
	type Selection,
	type SelectorLimits,
} from "./select.js";
export { lineShape } from "./shape.js";
export { exceptionsLine, outcomeHeadline, type RunFacts, runStatus, statusLines } from "./status.js";
