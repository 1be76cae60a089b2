import { applyTaskUpdate, renderTask, type TaskUpdate } from "../task/index.js";
import { BoundedText } from "./output.js";
import type { RecoveryContext, RecoveryLimits, RecoveryResponse } from "./types.js";

/** Changes the task snapshot. Pins must name archived observations, so a pinned id is always readable. */
export async function updateTask(
	context: RecoveryContext,
	update: TaskUpdate,
	limits: RecoveryLimits,
): Promise<RecoveryResponse> {
	for (const id of update.pin ?? []) await context.archive.get(id);
	let changes: string[] = [];
	const snapshot = await context.tasks.update((current) => {
		const applied = applyTaskUpdate(current, update);
		changes = applied.changes;
		return applied.snapshot;
	});
	const out = new BoundedText(limits.responseMaxBytes);
	out.add(changes.length > 0 ? `Task updated: ${changes.join(", ")}.` : "Task unchanged.");
	const rendered = renderTask(snapshot);
	if (rendered) for (const line of rendered.split("\n")) out.add(line);
	else out.add("The task snapshot is now empty.");
	const note = out.cut ? `[Cut to fit ${limits.responseMaxBytes} bytes; the full snapshot is stored.]` : undefined;
	return { action: "update", text: out.finish(note), isError: false, evidence: true, truncated: out.cut };
}
