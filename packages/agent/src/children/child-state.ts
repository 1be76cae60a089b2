import type { ChildResidency, ChildRuntime, ChildStatus } from "./types.js";

/** Why a child was stopped; `silent` when no notice should follow (the parent's shutdown). */
export interface ChildCancel {
	reason: string;
	silent: boolean;
}

/**
 * Where one child is in its life; exactly one at a time.
 * - `starting`: its session launches (`rlm(...)` returned already).
 * - `running`: its first run.
 * - `idle`: finished, its session in memory (retained); a delivered message wakes a turn in it.
 * - `passive`: evicted after being idle; its session file and kernel snapshot stay. `back` while a
 *   message brings it back (its session launches again from the file).
 * - `stopping`: deleted or shut down while `was`; its launch, run or woken turn ends, then it is
 *   `cancelled` (a failed child stays `failed`). Its status meanwhile is the one it had.
 * - `failed`, `cancelled`: over; `runtime` until it is shut down (a failed child's session still
 *   takes its own children's notices), `cancel` when it was stopped (a later turn's end stays cancelled).
 */
export type ChildState =
	| { phase: "starting" }
	| { phase: "running" | "idle"; runtime: ChildRuntime }
	| { phase: "passive"; back?: Promise<void> }
	| {
			phase: "stopping";
			was: "starting" | "running" | "idle" | "passive" | "failed" | "cancelled";
			cancel: ChildCancel;
			runtime?: ChildRuntime;
	  }
	| { phase: "failed" | "cancelled"; runtime?: ChildRuntime; cancel?: ChildCancel };

/** The child's session in memory, if any. */
export function runtimeOf(state: ChildState): ChildRuntime | undefined {
	return "runtime" in state ? state.runtime : undefined;
}

/** The status `rlm.list_subagents()` shows: a passive child is idle; one being stopped keeps its status until it ends. */
export function statusOf(state: ChildState): ChildStatus {
	const phase = state.phase === "stopping" ? state.was : state.phase;
	return phase === "passive" ? "idle" : phase;
}

/** Running (a turn or its start is under way), retained (in memory) or passive (evicted). */
export function residencyOf(state: ChildState): ChildResidency {
	if (state.phase === "passive" || (state.phase === "stopping" && state.was === "passive")) return "passive";
	const status = statusOf(state);
	if (status === "starting" || status === "running" || childWorks(state)) return "running";
	return "retained";
}

/** The child starts, runs, comes back from passive, or its session has a turn under way or waiting. */
export function childWorks(state: ChildState): boolean {
	if (state.phase === "starting" || state.phase === "running") return true;
	if (state.phase === "passive") return state.back !== undefined;
	const runtime = runtimeOf(state);
	return runtime !== undefined && !runtime.isIdle();
}
