import { UserError } from "../errors.js";

/** `harness` in settings.json. */
export interface HarnessSettings {
	/** Refine automatically (every 25 assistant turns and after a compaction, root sessions only). Default true. */
	autoRefine: boolean;
}

/** Read `"harness": {"autoRefine": false}`; a wrong type is an error naming the key. */
export function harnessSettingsFrom(raw: unknown, file: string): HarnessSettings {
	if (raw === undefined) return { autoRefine: true };
	const value = raw as { autoRefine?: unknown };
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		throw new UserError(
			`"harness" in ${file} must be an object.`,
			'Write it as {"harness": {"autoRefine": false}} or remove it.',
		);
	}
	if (value.autoRefine !== undefined && typeof value.autoRefine !== "boolean") {
		throw new UserError(`"harness.autoRefine" in ${file} must be true or false.`, "Fix the value and retry.");
	}
	return { autoRefine: value.autoRefine ?? true };
}
