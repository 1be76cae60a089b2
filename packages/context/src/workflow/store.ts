import { mkdir } from "node:fs/promises";
import { loadState, updateState } from "../broker/state.js";
import { normalizeWorkflow, syncWorkflow } from "./tracker.js";
import type { WorkflowState, WorkflowSync } from "./types.js";

/** The workflow of one session, kept in its broker state (`broker-state.json`, under its lock). */
export interface WorkflowStore {
	/** The state as stored now. */
	load(): Promise<WorkflowState>;
	/** Takes in what the host reports (see `syncWorkflow`) and returns the new state. */
	sync(sync: WorkflowSync): Promise<WorkflowState>;
	/**
	 * Continues another session's workflow here (a fork continues its parent's): its lock, revisions,
	 * messages counted, tests and figures replace this session's. A fork keeps its parent's entry ids,
	 * so no message is counted twice and a lock is never lost by forking before it.
	 */
	adopt(from: WorkflowState): Promise<void>;
}

export function workflowStore(sessionDir: string): WorkflowStore {
	return {
		async load() {
			return normalizeWorkflow((await loadState(sessionDir)).workflow);
		},
		async sync(sync) {
			await mkdir(sessionDir, { recursive: true, mode: 0o700 });
			let next: WorkflowState | undefined;
			await updateState(sessionDir, (state) => {
				next = syncWorkflow(normalizeWorkflow(state.workflow), sync);
				state.workflow = next;
			});
			return next as WorkflowState;
		},
		async adopt(from) {
			await mkdir(sessionDir, { recursive: true, mode: 0o700 });
			await updateState(sessionDir, (state) => {
				state.workflow = normalizeWorkflow(from);
			});
		},
	};
}
