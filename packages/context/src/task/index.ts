/** The durable task snapshot: focus, open items and pinned observations of one session. */
export {
	applyTaskUpdate,
	EMPTY_TASK,
	isEmptyTask,
	renderTask,
	TASK_LIMITS,
	type TaskSnapshot,
	type TaskUpdate,
	TaskUpdateError,
} from "./snapshot.js";
export { fileTaskStore, memoryTaskStore, type TaskStore, TaskStoreError } from "./store.js";
