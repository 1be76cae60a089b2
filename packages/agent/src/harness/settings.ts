import { UserError } from "../errors.js";

/** `harness` in settings.json. */
export interface HarnessSettings {
	/** Refine automatically (every 25 assistant turns and after a compaction, root sessions only). Default true. */
	autoRefine: boolean;
}

/**
 * Read `"harness": {"autoRefine": false}`; `PRIME_AGENT_AUTO_REFINE=0` or `1` in the environment
 * overrides it. A wrong type or value is an error naming where it came from.
 */
export function harnessSettingsFrom(raw: unknown, file: string, env: NodeJS.ProcessEnv = {}): HarnessSettings {
	const fromEnv = env.PRIME_AGENT_AUTO_REFINE;
	if (fromEnv !== undefined && fromEnv !== "") {
		if (fromEnv !== "0" && fromEnv !== "1") {
			throw new UserError(
				`PRIME_AGENT_AUTO_REFINE is ${JSON.stringify(fromEnv)}, not 0 or 1.`,
				"Set it to 0 (no automatic refinement) or 1, or unset it.",
			);
		}
	}
	if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw))) {
		throw new UserError(
			`"harness" in ${file} must be an object.`,
			'Write it as {"harness": {"autoRefine": false}} or remove it.',
		);
	}
	const value = (raw ?? {}) as { autoRefine?: unknown };
	if (value.autoRefine !== undefined && typeof value.autoRefine !== "boolean") {
		throw new UserError(`"harness.autoRefine" in ${file} must be true or false.`, "Fix the value and retry.");
	}
	if (fromEnv === "0" || fromEnv === "1") return { autoRefine: fromEnv === "1" };
	return { autoRefine: value.autoRefine ?? true };
}
