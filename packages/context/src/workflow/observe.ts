import { CLEAN_CAPSULE_BYTES, outcomeHeadline, type RunFacts, runStatus } from "../capsule/index.js";
import { countsTotal } from "../capsule/status.js";
import type { Outcome } from "../types.js";
import { cleanResultLines } from "./render.js";
import { normalizeWorkflow, observeWorkflow } from "./tracker.js";
import type { WorkflowObservation } from "./types.js";

/**
 * What the tracker takes from an observation's outcome. A test run is one with counts from a
 * recognised terminal summary. A decisive failure is a failed run with test counts, failing ids or
 * exceptions (a `grep` that exits 1 is not one). A clean success passes, or exits 0 with no failure evidence.
 */
export function workflowObservation(id: string, outcome: Outcome, facts: RunFacts): WorkflowObservation {
	const status = runStatus(outcome, facts);
	const evidence = outcome.failingIds.length > 0 || outcome.exceptions.length > 0;
	return {
		id,
		status,
		tests: outcome.counts ? countsTotal(outcome.counts) : null,
		headline: outcomeHeadline(outcome, facts),
		decisiveFailure: status === "fail" && (outcome.counts !== null || evidence),
		clean: status === "pass" || (status === "unknown" && facts.exitCode === 0 && !evidence),
	};
}

/**
 * The workflow lines a clean result shows (see `cleanResultLines`), with the state this result
 * leads to; none for other results. Brief when the clean capsule's budget is below its usual size.
 */
export function cleanLinesFor(stored: unknown, observation: WorkflowObservation, cleanBudget: number): string[] {
	if (!observation.clean) return [];
	const brief = cleanBudget < CLEAN_CAPSULE_BYTES;
	return cleanResultLines(observeWorkflow(normalizeWorkflow(stored), observation), brief);
}
