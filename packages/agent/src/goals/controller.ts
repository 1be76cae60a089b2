import { randomBytes } from "node:crypto";
import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Usage } from "@mariozechner/pi-ai";
import type { HiddenMessage } from "../extensions/index.js";
import type { RunSupervisor, StopVerdict, WouldStopEvent } from "../orchestrator/index.js";
import { compactionBoundary, type SessionEntry } from "../session/index.js";
import { goalContinueMessage, goalStartMessage } from "./prompt.js";
import { budgetReached, checkText, currentGoal, emptyUsage, isEmptyBudget } from "./state.js";
import {
	GOAL_CONTEXT,
	type GoalBudget,
	type GoalData,
	GoalError,
	type GoalUsage,
	IDLE_CONTINUATION_LIMIT,
} from "./types.js";

/** What the goals need from the session: its branch, an entry, its sub-agents, a way to go on. */
export interface GoalHost {
	branch(): readonly SessionEntry[];
	/**
	 * Append a `goal` custom entry. `keep`: the user made this change (set, pause, resume, clear), so
	 * it is written at once, even in a session that has no answer yet (see `AppendOptions.keep`).
	 */
	append(data: GoalData, keep: boolean): void;
	/** Sub-agents are starting, running, or have a delivered message to take. */
	childrenBusy(): boolean;
	/** The session has a conversation (a goal set now starts a turn at once rather than with the next prompt). */
	hasConversation(): boolean;
	/**
	 * Start work on the goal: a turn at once when the session has a conversation and is idle (or at
	 * the next turn boundary when a run is going), else with the next prompt.
	 */
	start(message: HiddenMessage): void;
	/** Take back a start message not sent yet: the goal was paused or cleared before the next prompt. */
	withdrawStart(): void;
}

export type GoalEventKind =
	| "set"
	| "paused"
	| "resumed"
	| "cleared"
	| "complete"
	| "budget_reached"
	| "stuck"
	| "continued"
	| "held";

/** What the modes show: a goal changed, or the host continued (or held back) work on it. */
export interface GoalEvent {
	type: "goal";
	event: GoalEventKind;
	goal: GoalData;
}

/** Who asks: the user (`/goal`, `--goal`) may replace an open goal; the model (`goal.create`) may not. */
export type GoalCaller = "user" | "model";

/** The summary of a goal completed with `await goal.complete()`. */
export const NO_SUMMARY = "(no summary given)";

/** A goal's state in a sentence ("goal X stopped at its budget: ..."). */
const STATUS_WORDS: Record<GoalData["status"], string> = {
	active: "is active",
	paused: "is paused",
	complete: "is complete",
	budget_reached: "stopped at its budget",
	cleared: "is cleared",
};

/**
 * The goal of a session: set, paused, resumed, cleared and completed from `/goal`, `--goal` and the
 * kernel's `goal` module; usage counted while it is active (model turns, input + output tokens,
 * working time, sub-agents' tokens included); and, as the run supervisor, what happens when the
 * model would stop: a continuation with the audit prompt, held back while sub-agents are unsettled,
 * never past a budget.
 */
export class GoalController implements RunSupervisor {
	/** Usage since the goal's last entry. */
	private unsaved: GoalUsage = emptyUsage();
	private unsavedFor: string | undefined;
	private turnStartedAt: number | undefined;
	/** A budget ran out during this run: end it once the current tools are done. */
	private endRun = false;
	/** Continuations in a row answered without running anything. */
	private idleContinuations = 0;
	private ranToolsSinceContinuation = false;
	/** The last stop was answered with a continuation (the next stop answers it). */
	private continued = false;
	/**
	 * The goal stopped at its budget during a turn: its event waits for the turn's end, so that what
	 * a mode shows of the turn (its cells) comes before the line saying the goal stopped.
	 */
	private stopUntold: GoalData | undefined;
	private readonly listeners = new Set<(event: GoalEvent) => void>();

	constructor(private readonly host: GoalHost) {}

	/** The goal of the active branch (any status), with its usage up to now. */
	current(): GoalData | undefined {
		const goal = currentGoal(this.host.branch());
		return goal && { ...goal, used: this.usedNow(goal) };
	}

	/** The active goal, or undefined. */
	active(): GoalData | undefined {
		const goal = this.current();
		return goal?.status === "active" ? goal : undefined;
	}

	onEvent(listener: (event: GoalEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** Set a goal and start work on it. The model may not replace an open (active or paused) goal. */
	create(objective: unknown, budget: GoalBudget, caller: GoalCaller): GoalData {
		const text = checkText(objective, caller === "model" ? "goal.create(objective)" : "The objective");
		const open = this.current();
		if (caller === "model" && open && (open.status === "active" || open.status === "paused")) {
			throw new GoalError(
				`goal.create(): goal ${open.id} is already ${open.status} (${open.objective.slice(0, 80)}); finish it with await goal.complete(summary), or ask the user to /goal clear it.`,
			);
		}
		const goal: GoalData = {
			id: `goal-${randomBytes(4).toString("hex")}`,
			objective: text,
			status: "active",
			...(isEmptyBudget(budget) ? {} : { budget }),
			used: emptyUsage(),
		};
		this.write(goal, "set", caller === "user");
		this.idleContinuations = 0;
		this.host.start(goalStartMessage(goal));
		return goal;
	}

	pause(): GoalData {
		const goal = this.require("pause", ["active"], "only an active goal can be paused");
		this.host.withdrawStart();
		return this.write({ ...goal, status: "paused", reason: "paused by the user" }, "paused", true);
	}

	/** Resume a paused goal, or one stopped by its budget (then with a larger budget). */
	resume(budget: GoalBudget = {}): GoalData {
		const goal = this.require(
			"resume",
			["paused", "budget_reached"],
			"only a paused goal, or one stopped by its budget, can be resumed",
		);
		const merged = { ...goal.budget, ...budget };
		const over = budgetReached(merged, goal.used ?? emptyUsage());
		if (over) {
			throw new GoalError(
				`the goal cannot resume: its ${over}. Give a larger budget, e.g. /goal resume --tokens N --turns N --minutes N.`,
			);
		}
		const { reason: _reason, ...rest } = goal;
		const resumed = this.write(
			{ ...rest, status: "active", ...(isEmptyBudget(merged) ? {} : { budget: merged }) },
			"resumed",
			true,
		);
		this.idleContinuations = 0;
		this.host.start(goalStartMessage(resumed));
		return resumed;
	}

	clear(): GoalData {
		const goal = this.current();
		if (!goal || goal.status === "cleared") throw new GoalError("there is no goal to clear.");
		this.host.withdrawStart();
		return this.write({ ...goal, status: "cleared", reason: "cleared by the user" }, "cleared", true);
	}

	/**
	 * `await goal.complete(summary)` from the kernel; `await goal.complete()` (as Prime Context's
	 * GOAL_READY guard words it) completes with NO_SUMMARY.
	 */
	complete(summary: unknown): GoalData {
		const text =
			summary === undefined || summary === null ? NO_SUMMARY : checkText(summary, "goal.complete(summary): summary");
		const goal = this.current();
		if (!goal || goal.status === "cleared" || goal.status === "complete") {
			throw new GoalError("goal.complete(): there is no active goal to complete (goal.get() shows the goal, if any).");
		}
		if (goal.status === "paused")
			throw new GoalError(
				`goal.complete(): goal ${goal.id} is paused by the user; it can be completed once they resume it (/goal resume).`,
			);
		if (goal.status === "budget_reached")
			throw new GoalError(
				`goal.complete(): goal ${goal.id} stopped when its ${goal.reason ?? "budget ran out"}; it is not complete. Tell the user what is left.`,
			);
		const { reason: _reason, ...rest } = goal;
		return this.write({ ...rest, status: "complete", summary: text }, "complete");
	}

	/** Count a loop event toward the active goal's usage (subscribe it to the session). */
	observe(event: AgentEvent): void {
		switch (event.type) {
			case "agent_start":
				this.endRun = false;
				return;
			case "turn_start":
				this.turnStartedAt = Date.now();
				return;
			case "message_end": {
				// The user spoke: the next stop answers them, not a continuation.
				if (event.message.role === "user") {
					this.continued = false;
					this.idleContinuations = 0;
				}
				if (event.message.role !== "assistant") return;
				const message = event.message as AssistantMessage;
				if (message.content.some((part) => part.type === "toolCall")) this.ranToolsSinceContinuation = true;
				this.count({ tokens: tokensOf(message.usage), turns: 1, timeMs: 0 });
				return;
			}
			case "turn_end":
				if (this.turnStartedAt !== undefined)
					this.count({ tokens: 0, turns: 0, timeMs: Date.now() - this.turnStartedAt });
				this.turnStartedAt = undefined;
				this.tellStop();
				return;
			case "agent_end":
				this.tellStop();
				this.saveUsage();
				return;
		}
	}

	/** A sub-agent's usage (rolled up when its run ends) counts toward the goal too. */
	addChildUsage(usage: Usage): void {
		this.count({ tokens: tokensOf(usage), turns: 0, timeMs: 0 });
	}

	/** After each tool result: a budget already used up, or a time budget that ran out during the cell. */
	shouldEndRun(): boolean {
		if (this.endRun) return true;
		const goal = this.active();
		if (goal?.budget?.timeMs === undefined || this.turnStartedAt === undefined) return false;
		return this.checkBudget(goal, Date.now() - this.turnStartedAt);
	}

	onWouldStop(_event: WouldStopEvent): StopVerdict {
		const goal = this.active();
		if (!goal) return undefined;
		if (this.checkBudget(goal)) return undefined;
		if (this.host.childrenBusy()) {
			this.emit("held", goal);
			return { hold: true };
		}
		if (this.continued) this.idleContinuations = this.ranToolsSinceContinuation ? 0 : this.idleContinuations + 1;
		this.ranToolsSinceContinuation = false;
		if (this.idleContinuations >= IDLE_CONTINUATION_LIMIT) {
			this.write(
				{
					...goal,
					status: "paused",
					reason: `paused: the model answered ${IDLE_CONTINUATION_LIMIT} goal continuations in a row without running anything. Say what is missing, then /goal resume.`,
				},
				"stuck",
			);
			return undefined;
		}
		this.continued = true;
		this.emit("continued", goal);
		const repeat = wholeContinuationVisible(this.host.branch(), goal.id);
		return { continueWith: goalContinueMessage(goal, goal.used ?? emptyUsage(), repeat) };
	}

	private count(delta: GoalUsage): void {
		const goal = currentGoal(this.host.branch());
		if (goal?.status !== "active") return;
		if (this.unsavedFor !== goal.id) {
			this.unsaved = emptyUsage();
			this.unsavedFor = goal.id;
		}
		this.unsaved.tokens += delta.tokens;
		this.unsaved.turns += delta.turns;
		this.unsaved.timeMs += delta.timeMs;
		// Time runs during the turn too: a long cell counts before the turn ends.
		const running = this.turnStartedAt !== undefined && delta.timeMs === 0 ? Date.now() - this.turnStartedAt : 0;
		this.checkBudget({ ...goal, used: this.usedNow(goal) }, running);
	}

	/** Mark the goal `budget_reached` when a budget is used up; true when it is. */
	private checkBudget(goal: GoalData, runningMs = 0): boolean {
		const used = goal.used ?? emptyUsage();
		const over = budgetReached(goal.budget, { ...used, timeMs: used.timeMs + runningMs });
		if (!over) return false;
		this.endRun = true;
		const stopped = this.write({ ...goal, status: "budget_reached", reason: over });
		if (this.turnStartedAt === undefined) this.emit("budget_reached", stopped);
		else this.stopUntold = stopped;
		return true;
	}

	private tellStop(): void {
		const stopped = this.stopUntold;
		this.stopUntold = undefined;
		if (stopped) this.emit("budget_reached", stopped);
	}

	private usedNow(goal: GoalData): GoalUsage {
		const saved = goal.used ?? emptyUsage();
		if (this.unsavedFor !== goal.id) return saved;
		return {
			tokens: saved.tokens + this.unsaved.tokens,
			turns: saved.turns + this.unsaved.turns,
			timeMs: saved.timeMs + this.unsaved.timeMs,
		};
	}

	/** Record the usage of the run that ended (one entry per run, only when something was counted). */
	private saveUsage(): void {
		const goal = currentGoal(this.host.branch());
		if (!goal || this.unsavedFor !== goal.id) return;
		const { tokens, turns, timeMs } = this.unsaved;
		if (tokens === 0 && turns === 0 && timeMs === 0) return;
		this.write({ ...goal, used: this.usedNow(goal) });
	}

	private require(action: string, statuses: GoalData["status"][], rule: string): GoalData {
		const goal = this.current();
		if (!goal || goal.status === "cleared")
			throw new GoalError(`there is no goal to ${action}. Set one with /goal <objective>.`);
		if (!statuses.includes(goal.status)) throw new GoalError(`goal ${goal.id} ${STATUS_WORDS[goal.status]}: ${rule}.`);
		return goal;
	}

	/**
	 * Append the goal's new state (`used` is its whole usage up to now) and tell the listeners.
	 * `byUser`: a change the user made, kept even before the session's first answer.
	 */
	private write(goal: GoalData, event?: GoalEventKind, byUser = false): GoalData {
		const data: GoalData = { ...goal, used: goal.used ?? emptyUsage() };
		this.host.append(data, byUser);
		this.unsaved = emptyUsage();
		this.unsavedFor = goal.id;
		if (event) this.emit(event, data);
		return data;
	}

	private emit(event: GoalEventKind, goal: GoalData): void {
		for (const listener of this.listeners) listener({ type: "goal", event, goal });
	}
}

/** The model still sees a whole continuation prompt of goal `goalId`: one on the branch since its newest compaction. */
function wholeContinuationVisible(branch: readonly SessionEntry[], goalId: string): boolean {
	for (let index = compactionBoundary(branch).start; index < branch.length; index++) {
		const entry = branch[index] as SessionEntry;
		if (entry.type !== "custom_message" || entry.customType !== GOAL_CONTEXT) continue;
		const details = entry.details as { goalId?: unknown; kind?: unknown; repeat?: unknown } | undefined;
		if (details?.goalId === goalId && details.kind === "continue" && details.repeat !== true) return true;
	}
	return false;
}

/** Input + output tokens; cached tokens (read or written) are not counted. */
export function tokensOf(usage: Usage | undefined): number {
	return (usage?.input ?? 0) + (usage?.output ?? 0);
}
