/**
 * Recovery actions (list, read, search, status, update): host-independent, used by the CLI, the
 * agent's `prime_context` tool and its kernel module. Responses are bounded and never archived again.
 */
import { ArchiveError } from "../archive/types.js";
import { TaskStoreError, TaskUpdateError } from "../task/index.js";
import { RECOVERY_LIMITS } from "../types.js";
import { parseRecoveryRequest, RecoveryArgumentError } from "./arguments.js";
import { TOOL_HINTS } from "./hints.js";
import { listObservations } from "./list.js";
import { readObservation } from "./read.js";
import { searchObservations } from "./search.js";
import { describeStatus } from "./status.js";
import type { RecoveryContext, RecoveryLimits, RecoveryOptions, RecoveryRequest, RecoveryResponse } from "./types.js";
import { updateTask } from "./update.js";

export { parseRecoveryRequest, RecoveryArgumentError, usageOf } from "./arguments.js";
export { CLI_HINTS, PC_HINTS, TOOL_HINTS } from "./hints.js";
export { describeRecord } from "./list.js";
export { describeMetrics } from "./status.js";
export type {
	RecoveryAction,
	RecoveryContext,
	RecoveryHints,
	RecoveryLimits,
	RecoveryOptions,
	RecoveryRequest,
	RecoveryResponse,
} from "./types.js";

/**
 * Caps for an audience. The model gets the seed's caps (12 KiB, 80 lines, 10 matches, 20 listed),
 * never more than readMaxBytes; a person gets the readMaxBytes budget.
 */
export function recoveryLimits(audience: "model" | "human", readMaxBytes: number): RecoveryLimits {
	if (audience === "model") {
		return {
			listMax: RECOVERY_LIMITS.listMax,
			readMaxLines: RECOVERY_LIMITS.readMaxLines,
			searchMaxMatches: RECOVERY_LIMITS.searchMaxMatches,
			searchDefaultObservations: RECOVERY_LIMITS.searchDefaultObservations,
			contextLinesMax: RECOVERY_LIMITS.contextLinesMax,
			responseMaxBytes: Math.min(RECOVERY_LIMITS.responseMaxBytes, readMaxBytes),
			readLineMaxBytes: 4096,
			searchLineMaxBytes: 1024,
		};
	}
	return {
		listMax: 1000,
		readMaxLines: Number.MAX_SAFE_INTEGER,
		searchMaxMatches: 1000,
		searchDefaultObservations: RECOVERY_LIMITS.searchDefaultObservations,
		contextLinesMax: RECOVERY_LIMITS.contextLinesMax,
		responseMaxBytes: readMaxBytes,
		readLineMaxBytes: readMaxBytes,
		searchLineMaxBytes: 4096,
	};
}

/**
 * Runs one recovery call from loose arguments (`{ action: "read", id, startLine, ... }`). Never
 * throws for bad input or a damaged archive: the response is an error text saying what is allowed.
 * Every call is reported to the broker, with whether it returned evidence.
 */
export async function runRecovery(
	context: RecoveryContext,
	args: unknown,
	options: RecoveryOptions = {},
): Promise<RecoveryResponse> {
	const limits = recoveryLimits(options.audience ?? "model", context.config.readMaxBytes);
	const hints = options.hints ?? TOOL_HINTS;
	let response: RecoveryResponse;
	let request: RecoveryRequest | null = null;
	try {
		request = parseRecoveryRequest(args, limits);
		response = await perform(context, request, limits, hints);
	} catch (error) {
		if (
			!(
				error instanceof RecoveryArgumentError ||
				error instanceof ArchiveError ||
				error instanceof TaskUpdateError ||
				error instanceof TaskStoreError
			)
		) {
			throw error;
		}
		const action = request?.action ?? "invalid";
		response = { action, text: `Error: ${error.message}`, isError: true, evidence: false, truncated: false };
	}
	// Metrics are a diagnostic: failing to record one (e.g. read-only storage) never costs the answer.
	await context.broker?.recordRecovery(response.action, response.evidence).catch(() => {});
	return response;
}

function perform(
	context: RecoveryContext,
	request: RecoveryRequest,
	limits: RecoveryLimits,
	hints: NonNullable<RecoveryOptions["hints"]>,
): Promise<RecoveryResponse> {
	switch (request.action) {
		case "list":
			return listObservations(context, request.limit, limits, hints);
		case "read":
			return readObservation(context, request, limits, hints);
		case "search":
			return searchObservations(context, request, limits, hints);
		case "status":
			return describeStatus(context, limits);
		case "update":
			return updateTask(context, request, limits);
	}
}
