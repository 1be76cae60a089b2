/**
 * Outcome parsing for Prime Context: recognises the result of a test run, build, lint or command from
 * result-shaped lines, streaming and in bounded memory, and classifies single lines for capsules.
 *
 * - Runners: pytest, unittest, jest, vitest, mocha, node's test runner (spec and TAP), uvu, tsc,
 *   eslint, cargo/rustc, go test, maven, gradle, mypy, ruff, npm, generic counted summaries and typed
 *   exit statuses. ANSI escapes are stripped for parsing only.
 * - Counts come only from result-shaped lines; prose that mentions counts stays content.
 * - `status` is `fail` on any failure evidence (failing ids, failed or error counts, FAILED/BUILD
 *   FAILURE lines, diagnostics, a non-zero exit, a tool error, a crash after the last clean summary),
 *   `pass` only with a clean terminal summary and no such evidence, else `unknown`.
 * - `exceptions` holds `Type: message` lines and bare types, and also the diagnostic codes that play
 *   the same role for compilers and linters (`TS2322`, `E0308`, eslint/ruff/mypy rule ids, npm codes).
 * - `locations` lists project files first, then library and runtime frames, each deduplicated.
 * - Memory is capped (5000 ids, 500 exceptions and one of each of 100 types first seen after them, 4096
 *   project + 256 library locations, 128 summary lines) and each line's patterns see at most its first 4 KiB.
 */
export { stripAnsi, visibleLine } from "./ansi.js";
export { classifyLine, type LineKind, noteShaped, type ShapedLines } from "./classify.js";
export { exceptionOf } from "./diagnostics.js";
export { type DiffLine, DiffReader, isDiffTarget } from "./diff.js";
export { type IdMark, markAround, UNSAFE_MARK } from "./id-marks.js";
export { type Keep, keeper, LINE_SLOTS, type LineMemo, LineTable, lineSlot } from "./line-slot.js";
export { createOutcomeScanner, type OutcomeHints, type OutcomeScanner, parseOutcome } from "./scanner.js";
export { normalizeEvidence, outcomeSignature } from "./signature.js";
export { clip, escapeControls, lastFrame, visibleText } from "./visible.js";
