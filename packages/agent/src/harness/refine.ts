import { type Api, type AssistantMessage, completeSimple, type Model } from "@mariozechner/pi-ai";
import { fitOneRequest } from "../compaction/index.js";
import {
	baseSystemPromptRefusal,
	checkKind,
	checkName,
	checkScope,
	checkText,
	deletableName,
	HarnessError,
	isoNow,
	newEntry,
	sameContent,
} from "./entries.js";
import type { Harness } from "./harness.js";
import { parsePlan } from "./plan.js";
import { changedSomething, cutText, renderEntries } from "./prompt-index.js";
import { PLANNING_SYSTEM_PROMPT, planningRequest, REVIEW_SYSTEM_PROMPT, reviewRequest } from "./refine-prompts.js";
import {
	BASE_SYSTEM_PROMPT,
	HARNESS_LIMITS,
	type HarnessEntry,
	type HarnessScope,
	type RecordedEdit,
	type Refinement,
	type RefinementTrigger,
	type ScopedEntry,
} from "./types.js";

/** The model the refinement calls use (the session's), with its key. */
export interface RefineModel {
	model: Model<Api>;
	apiKey: string;
	/** Aborts the calls (the session was stopped or is closing): the refinement ends as `stopped`. */
	signal?: AbortSignal;
}

export interface RefineRequest {
	harness: Harness;
	/** The session's trajectory as text, oldest first (the calls see its newest characters). */
	trajectory: string;
	/** The current task (ranks the overview). */
	task: string;
	trigger: RefinementTrigger;
	instructions?: string;
	/** The automatic path: a review call decides first whether anything is worth keeping. */
	review: boolean;
	model: RefineModel;
}

export interface RefineOutcome {
	refinement: Refinement;
	/** What happened, for the user or the model. */
	report: string;
}

/**
 * One refinement: (on the automatic path) the review gate, then the planning call with thinking
 * off, then each edit validated and applied atomically against the baseline the plan was made
 * from. A failing edit is recorded and the others go on. Always recorded in the log.
 */
export async function runRefinement(request: RefineRequest): Promise<RefineOutcome> {
	const { harness } = request;
	const base = { trigger: request.trigger, ...(request.instructions ? { instructions: request.instructions } : {}) };
	const retirement = retirementCandidates(harness);
	let review: string | undefined;
	if (request.review) {
		const answer = await ask(
			request.model,
			REVIEW_SYSTEM_PROMPT,
			reviewRequest(tail(request.trajectory, HARNESS_LIMITS.reviewChars), retirement),
		);
		if ("error" in answer)
			return finish(harness, { ...base, ...callFailed(request, "review", answer.error), edits: [] });
		review = answer.text.trim();
		if (nothingWorthKeeping(review)) {
			return finish(harness, {
				...base,
				status: "rejected",
				summary: "The review found nothing worth keeping.",
				review,
				edits: [],
			});
		}
	}
	// The planning baseline: what the plan is made against (a later change to an entry it edits is a conflict).
	const baseline = harness.entries();
	const answer = await ask(
		request.model,
		PLANNING_SYSTEM_PROMPT,
		planningRequest({
			trajectory: tail(request.trajectory, HARNESS_LIMITS.planningChars),
			overview: renderEntries(baseline, request.task, {
				entries: HARNESS_LIMITS.overviewEntries,
				chars: HARNESS_LIMITS.overviewChars,
			}),
			refinements: harness.refinements().slice(-HARNESS_LIMITS.planningRefinements).map(describeRefinement).join("\n"),
			retirement,
			instructions: request.instructions,
			review,
		}),
	);
	const withReview = review ? { review } : {};
	if ("error" in answer)
		return finish(harness, { ...base, ...withReview, ...callFailed(request, "planning", answer.error), edits: [] });
	const plan = parsePlan(answer.text, answer.stopReason === "length");
	if (!plan.ok) return finish(harness, { ...base, ...withReview, status: "failed", summary: plan.message, edits: [] });
	const edits = plan.edits.map((edit) => applyEdit(harness, edit, baseline));
	const applied = edits.filter((edit) => edit.status === "applied").length;
	const status =
		edits.length === 0 ? "nothing" : applied === edits.length ? "applied" : applied === 0 ? "failed" : "partial";
	return finish(harness, { ...base, ...withReview, status, summary: summarizeEdits(edits), edits });
}

/**
 * Undo a refinement from its snapshots, newest edit first, with no model call: what it created is
 * deleted, what it changed or deleted comes back exactly as it was. Refused as a whole (nothing
 * changes) when an entry it touched has changed since. Recorded as a refinement itself.
 */
export function rollbackRefinement(harness: Harness, id: string): RefineOutcome {
	const target = harness.refinements().find((refinement) => refinement.id === id);
	if (!target) {
		throw new HarnessError(`no refinement ${JSON.stringify(id)} in this session; /refine list shows the ids.`);
	}
	const undo = target.edits.filter((edit) => edit.status === "applied").reverse();
	if (undo.length === 0) throw new HarnessError(`${id} changed nothing, so there is nothing to roll back.`);
	const conflicts = undo.filter((edit) => {
		const current = harness.find(checkKind(edit.kind), edit.name, edit.scope);
		const exact = current && current.scope === edit.scope ? current : null;
		return !sameContent(exact, edit.after);
	});
	if (conflicts.length > 0) {
		const log = harness.refinements();
		const undoneBy = log.filter((refinement) => refinement.rollbackOf === id && changedSomething(refinement)).at(-1);
		if (undoneBy && !log.some((refinement) => refinement.rollbackOf === undoneBy.id)) {
			throw new HarnessError(
				`${id} was already rolled back by ${undoneBy.id}; nothing was changed. /refine rollback ${undoneBy.id} puts its changes back.`,
			);
		}
		throw new HarnessError(
			`${id} cannot be rolled back: ${conflicts.map((edit) => `${edit.kind} "${edit.name}"`).join(", ")} changed since; nothing was changed. Edit those entries by hand (rlm.harness) or roll back the later refinement first.`,
		);
	}
	const edits: RecordedEdit[] = undo.map((edit) => {
		const scope = edit.scope as HarnessScope;
		const kind = checkKind(edit.kind);
		const op = edit.op === "create" ? "delete" : edit.op === "delete" ? "create" : "update";
		try {
			const { before, after } = harness.change(scope, kind, edit.name, (current) => {
				if (!sameContent(current, edit.after)) throw new HarnessError("it changed while the rollback ran");
				return edit.before;
			});
			return { op, kind, name: edit.name, scope, status: "applied", before, after };
		} catch (error) {
			return {
				op,
				kind,
				name: edit.name,
				scope,
				status: "failed",
				error: (error as Error).message,
				before: null,
				after: null,
			};
		}
	});
	const applied = edits.filter((edit) => edit.status === "applied").length;
	return finish(harness, {
		trigger: "rollback",
		rollbackOf: id,
		status: applied === edits.length ? "applied" : applied === 0 ? "failed" : "partial",
		summary: `Rolled back ${id}: ${summarizeEdits(edits)}`,
		edits,
	});
}

/** Validate one planned edit and apply it atomically; a failure is recorded, never thrown. */
export function applyEdit(harness: Harness, raw: Record<string, unknown>, baseline: ScopedEntry[]): RecordedEdit {
	const op = normalizeOp(raw.op);
	const recorded: RecordedEdit = {
		op: op ?? "update",
		kind: String(raw.kind ?? ""),
		name: String(raw.name ?? ""),
		status: "failed",
		...(typeof raw.reason === "string" ? { reason: raw.reason } : {}),
		before: null,
		after: null,
	};
	try {
		if (Object.values(raw).includes(BASE_SYSTEM_PROMPT)) throw baseSystemPromptRefusal();
		if (!op) throw new HarnessError(`op ${JSON.stringify(raw.op)} is not create, update or delete.`);
		const kind = checkKind(raw.kind);
		recorded.kind = kind;
		const scope = checkScope(raw.scope);
		// A delete may name an entry written by hand whose name breaks the rules; the rest need valid names.
		const name =
			op === "delete"
				? deletableName(raw.name, (name) =>
						baseline.some((entry) => entry.kind === kind && entry.name === name && (!scope || entry.scope === scope)),
					)
				: checkName(raw.name);
		const text = op === "delete" ? "" : checkText(raw.text);
		const at = isoNow(harness.now());
		const planned = (where: HarnessScope) =>
			baseline.find((entry) => entry.kind === kind && entry.name === name && entry.scope === where) ?? null;
		let where: HarnessScope;
		let decide: (current: HarnessEntry | null) => HarnessEntry | null;
		if (op === "create") {
			where = scope ?? "local";
			if (planned(where)) throw new HarnessError(`a ${kind} named "${name}" already exists (${where}); use update.`);
			decide = (current) => {
				if (current) throw conflict(kind, name, "was created");
				return newEntry(kind, name, text, at);
			};
		} else {
			const found = scope ? planned(scope) : (planned("local") ?? planned("global"));
			if (!found)
				throw new HarnessError(`no ${kind} named "${name}"${scope ? ` in the ${scope} store` : ""} to ${op}.`);
			where = found.scope;
			decide = (current) => {
				if (!sameContent(current, found)) throw conflict(kind, name, current ? "was changed" : "was deleted");
				return op === "delete" ? null : { ...(current as HarnessEntry), text, updatedAt: at };
			};
		}
		recorded.scope = where;
		const { before, after } = harness.change(where, kind, name, decide);
		return { ...recorded, status: "applied", before, after };
	} catch (error) {
		return { ...recorded, error: (error as Error).message };
	}
}

function conflict(kind: string, name: string, what: string): HarnessError {
	return new HarnessError(
		`the ${kind} "${name}" ${what} since the plan was made; the edit was refused so that change is not lost.`,
	);
}

function normalizeOp(op: unknown): RecordedEdit["op"] | undefined {
	if (op === "create" || op === "add") return "create";
	if (op === "update" || op === "edit" || op === "replace") return "update";
	if (op === "delete" || op === "remove" || op === "retire") return "delete";
	return undefined;
}

/**
 * Entries not used, read or written through the last `staleAfterRefinements` refinements that
 * changed something: proposed for retirement to the next review instead of sinking behind `+N more`.
 */
export function retirementCandidates(harness: Harness): string {
	const landed = harness
		.refinements()
		.filter((refinement) => refinement.edits.some((edit) => edit.status === "applied"));
	const since = landed.at(-HARNESS_LIMITS.staleAfterRefinements)?.at;
	if (landed.length < HARNESS_LIMITS.staleAfterRefinements || !since) return "";
	return harness
		.entries()
		.filter((entry) => (entry.lastUsedAt ?? "") < since && entry.updatedAt < since)
		.map(
			(entry) =>
				`- ${entry.kind}/${entry.name} (${entry.scope}; ${entry.uses} uses, last ${entry.lastUsedAt ?? "never"}): ${cutText(entry.text, HARNESS_LIMITS.indexChars)}`,
		)
		.join("\n");
}

/** One line per refinement and one per edit, for the planner and `/refine list`. */
export function describeRefinement(refinement: Refinement): string {
	const head = `${refinement.id} ${refinement.at} ${refinement.trigger}${refinement.rollbackOf ? ` of ${refinement.rollbackOf}` : ""} ${refinement.status}: ${cutText(refinement.summary, HARNESS_LIMITS.overviewChars)}`;
	return [head, ...refinement.edits.map((edit) => `  ${describeEdit(edit)}`)].join("\n");
}

function describeEdit(edit: RecordedEdit): string {
	const where = `${edit.op} ${edit.kind} "${edit.name}"${edit.scope ? ` (${edit.scope})` : ""}`;
	return edit.status === "applied" ? where : `${where} failed: ${edit.error ?? "unknown reason"}`;
}

function summarizeEdits(edits: RecordedEdit[]): string {
	if (edits.length === 0) return "No edits.";
	return `${edits.map(describeEdit).join("; ")}.`;
}

function finish(harness: Harness, refinement: Omit<Refinement, "id" | "at">): RefineOutcome {
	const recorded = harness.record(refinement);
	return { refinement: recorded, report: describeRefinement(recorded) };
}

/** A model call that came back without an answer: `stopped` when the session stopped it, else `failed`. */
function callFailed(
	request: RefineRequest,
	call: "review" | "planning",
	error: string,
): Pick<Refinement, "status" | "summary"> {
	if (request.model.signal?.aborted)
		return {
			status: "stopped",
			summary: `Stopped during the ${call} call: the session was stopped or closed. Nothing was changed.`,
		};
	return { status: "failed", summary: `The ${call} call failed: ${error}` };
}

/** An empty review, or one that says there is nothing, rejects the refinement. */
function nothingWorthKeeping(review: string): boolean {
	return review === "" || /^(nothing|none|no\b|\[\s*\]$|n\/a)/i.test(review.replace(/^[\s*`"'-]+/, ""));
}

function tail(text: string, chars: number): string {
	return text.length <= chars ? text : text.slice(text.length - chars);
}

/** One call with thinking off; an error or abort comes back as `error`. */
async function ask(
	model: RefineModel,
	systemPrompt: string,
	text: string,
): Promise<{ text: string; stopReason: AssistantMessage["stopReason"] } | { error: string }> {
	let response: AssistantMessage;
	try {
		const message = { role: "user" as const, content: [{ type: "text" as const, text }], timestamp: Date.now() };
		// The trajectory fills much of a small window: the answer asks for what is left.
		const fitted = fitOneRequest(model.model, systemPrompt, message);
		response = await completeSimple(
			fitted,
			{ systemPrompt, messages: [message] },
			{ apiKey: model.apiKey, maxTokens: Math.min(fitted.maxTokens, 16_384), signal: model.signal },
		);
	} catch (error) {
		return { error: (error as Error).message };
	}
	if (response.stopReason === "error" || response.stopReason === "aborted") {
		return { error: response.errorMessage ?? response.stopReason };
	}
	const answer = response.content
		.filter((part) => part.type === "text")
		.map((part) => part.text)
		.join("");
	return { text: answer, stopReason: response.stopReason };
}
