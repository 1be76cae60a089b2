/**
 * Outcome parsing for Prime Context: recognises the result of a test run, build, lint or command from
 * result-shaped lines, streaming and in bounded memory, and classifies single lines for capsules.
 */
export { stripAnsi } from "./ansi.js";
export { classifyLine, type LineKind } from "./classify.js";
export { createOutcomeScanner, type OutcomeHints, type OutcomeScanner, parseOutcome } from "./scanner.js";
export { outcomeSignature } from "./signature.js";
